package metric

import "github.com/benchq/benchq/internal/abreport"

// A request succeeded when it completed (a whole HTTP response arrived)
// with a 2xx status and, unless variable lengths are accepted, the first
// response's body length. ab's counters do not say which requests were
// both a Length failure and non-2xx, so the successes of a run are known
// only as at most Complete − max(Length, non-2xx); when that bound is 0 or
// less no request succeeded, which is all the no-success rule needs to
// know. Length failures are the completed requests among the failed ones,
// so the requests a run attempted are Complete + Failed − Length.
//
// The ratios are defined so that each request counts once:
//   - failed_ratio = failed / (complete + failed - length failures): a
//     Length failure is a completed response with an unexpected size, so it
//     is already among the complete ones (the other classes never
//     complete); the denominator is http_load's "fetches". 0 when nothing
//     was attempted.
//   - non_2xx_ratio = non_2xx / complete: non-2xx responses are complete
//     (ab counts them so). 0 when nothing completed.

// SucceededAtMost bounds from above the requests of r that succeeded.
func SucceededAtMost(r *abreport.Report) int64 {
	return r.CompleteRequests - max(r.Failed.Length, r.Non2xxResponses)
}

// Attempted is the requests r attempted.
func Attempted(r *abreport.Report) int64 {
	return r.CompleteRequests + r.FailedRequests - r.Failed.Length
}

// goodRPS is the successes' share of ab's req/s, which is complete
// requests over the time taken.
func goodRPS(r *abreport.Report) float64 {
	if r.CompleteRequests <= 0 {
		return 0
	}
	return r.RequestsPerSecond * float64(max(0, SucceededAtMost(r))) / float64(r.CompleteRequests)
}

// errorRatio is the share of a run's attempted requests that did not
// succeed: failed, non-2xx, or both.
func errorRatio(r *abreport.Report) float64 {
	n := Attempted(r)
	if n <= 0 {
		return 0
	}
	return min(1, max(0, float64(n-max(0, SucceededAtMost(r)))/float64(n)))
}

func failedRatio(r *abreport.Report) float64 {
	attempts := r.CompleteRequests + r.FailedRequests - r.Failed.Length
	if attempts <= 0 || r.FailedRequests <= 0 {
		return 0
	}
	return min(1, float64(r.FailedRequests)/float64(attempts))
}

func non2xxRatio(r *abreport.Report) float64 {
	if r.CompleteRequests <= 0 {
		return 0
	}
	return float64(r.Non2xxResponses) / float64(r.CompleteRequests)
}
