package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/benchq/benchq/internal/job"
)

// writeGnuplot writes a tab-separated data file of mean req/s: one block
// per sweep slice (gnuplot's "index", blocks separated by two blank
// lines), each row a concurrency level then one column per target, "NaN"
// where a point has no runs. The header comments name the columns and
// carry a script that plots the first block.
func writeGnuplot(w io.Writer, j *job.Job, a job.Analysis) error {
	bw := bufio.NewWriter(w)
	g := newGrid(a)
	fmt.Fprintf(bw, "# %s: mean requests per second over repeats (benchq job %s)\n", title(j), j.ID)
	fmt.Fprintf(bw, "# columns: concurrency\t%s\n", strings.Join(g.Targets, "\t"))
	writeGnuplotScript(bw, g)
	for i, s := range g.Slices {
		if i > 0 {
			fmt.Fprint(bw, "\n\n")
		}
		fmt.Fprintf(bw, "# index %d: %s\n", i, s.Label())
		for _, c := range g.Conc[s] {
			fmt.Fprintf(bw, "%d", c)
			for _, t := range g.Targets {
				cell := "NaN"
				if ps := g.Cell(s, t, c); ps != nil {
					cell = fmt.Sprintf("%.2f", ps.RPS.Mean)
				}
				fmt.Fprintf(bw, "\t%s", cell)
			}
			fmt.Fprintln(bw)
		}
	}
	// bw's first error sticks and is returned by Flush.
	return bw.Flush()
}

// writeGnuplotScript prints, as comments, the few gnuplot lines that plot
// block 0 of this file saved as report.tsv; change "index 0" for the others.
func writeGnuplotScript(w io.Writer, g grid) {
	fmt.Fprint(w, "# gnuplot script (save this file as report.tsv):\n")
	fmt.Fprint(w, "#   set xlabel \"concurrency\"; set ylabel \"requests per second\"\n")
	fmt.Fprint(w, "#   set logscale x 2; set key top left; set yrange [0:*]\n")
	plots := make([]string, len(g.Targets))
	for i, t := range g.Targets {
		plots[i] = fmt.Sprintf("'report.tsv' index 0 using 1:%d with linespoints title %q", i+2, t)
	}
	fmt.Fprintf(w, "#   plot %s\n", strings.Join(plots, ", \\\n#        "))
}
