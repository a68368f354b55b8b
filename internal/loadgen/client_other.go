//go:build !linux

package loadgen

// readCPU is not implemented outside Linux: the usage stays unknown and no
// run is flagged client-bound.
func readCPU() cpuReading { return cpuReading{} }

func clientCores() int { return 0 }
