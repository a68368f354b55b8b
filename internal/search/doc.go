// Package search decides the probes of a capacity search: given the
// probes run so far against one target (each an open-model run at some
// rate, judged against the job's SLO), which rate to probe next, and once
// no probe is needed, the highest rate at which the SLO holds and the
// bracket it lies in.
//
// It is pure: the probes alone decide the next step, so a worker that
// resumes a search after a crash reads the probes already stored and asks
// again, and gets the step the lost attempt would have taken. What a
// probe is (a run, its SLO) is the caller's; this package sees rates,
// verdicts and what each probe spent.
package search
