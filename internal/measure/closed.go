package measure

import "time"

// ClosedInterval is one interval of a run's timeline handed out while the
// run goes (Plan.OnInterval), once no request of the run can add to it:
// interval Index of the timeline of Length-long intervals from Start. It
// equals the stored timeline's interval of the same Start and Length,
// with one exception in the open model: Started, Late and MaxSendLag count
// the requests started in the interval that had ended by then, so a
// request still in flight adds to them later.
type ClosedInterval struct {
	Start    time.Time
	Length   time.Duration
	Index    int
	Interval Interval
}

// Offset is the interval's start from the timeline's.
func (c ClosedInterval) Offset() time.Duration { return time.Duration(c.Index) * c.Length }
