// Package abcli is `benchq ab`, the ApacheBench drop-in: ab's command line
// (parsed by internal/abcmd) run on the benchq engine (internal/loadgen),
// printing what ab prints where ab prints it and exiting as ab does; with
// --server it submits the same line as a job to a running service and
// prints the merged result as a local run would.
//
// abcmd reads command lines and never touches the file system; this
// package is the program around it: it reads the files the line names,
// runs the load, writes the reports and the -e/-g files.
package abcli
