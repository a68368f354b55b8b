package job

// MaxComparisonPairs lets the external tests build one pair too many.
const MaxComparisonPairs = maxComparisonPairs
