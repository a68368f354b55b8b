package dashboard

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/benchq/benchq/internal/client"
	"github.com/benchq/benchq/internal/job"
)

// base is what the layout shows on every page.
type base struct {
	Title   string
	Nav     string // the active menu entry
	Caller  *Caller
	Monitor bool
}

func (h *Handler) base(r *http.Request, title, nav string) base {
	b := base{Title: title, Nav: nav, Monitor: h.cfg.Monitor}
	if c, ok := callerOf(r); ok {
		b.Caller = &c
	}
	return b
}

// render writes a page fully or not at all: a template error becomes an
// error page rather than half a page.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, page string, data any) {
	var buf bytes.Buffer
	if err := h.pages[page].Execute(&buf, data); err != nil {
		h.cfg.Log.Error("dashboard: render page", "page", page, "path", r.URL.Path, "err", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", ContentSecurityPolicy)
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

type errorData struct {
	base
	Status  int
	Message string
}

func (h *Handler) errorPage(w http.ResponseWriter, r *http.Request, status int, msg string) {
	h.render(w, r, status, "error", errorData{base: h.base(r, http.StatusText(status), ""), Status: status, Message: msg})
}

// apiError shows what the API answered: its problem's words for the
// client, or a plain message when the API could not be reached.
func (h *Handler) apiError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *client.APIError
	if errors.As(err, &ae) {
		if ae.Status == http.StatusUnauthorized {
			// The key was revoked since this session signed in.
			http.Redirect(w, r, Prefix+"/signin", http.StatusSeeOther)
			return
		}
		h.errorPage(w, r, ae.Status, problemText(ae.Problem))
		return
	}
	h.cfg.Log.Error("dashboard: api call", "path", r.URL.Path, "err", err)
	h.errorPage(w, r, http.StatusBadGateway, "The API did not answer; try again.")
}

func problemText(p client.Problem) string {
	if p.Detail != "" {
		return p.Detail
	}
	return p.Title
}

var funcs = template.FuncMap{
	"when": func(t any) string {
		switch v := t.(type) {
		case time.Time:
			if v.IsZero() {
				return "–"
			}
			return v.UTC().Format("2006-01-02 15:04:05") + " UTC"
		case *time.Time:
			if v == nil || v.IsZero() {
				return "–"
			}
			return v.UTC().Format("2006-01-02 15:04:05") + " UTC"
		}
		return ""
	},
	"ago": func(t time.Time) string { return ago(time.Since(t)) },
	"percent": func(done, total int) int {
		if total <= 0 {
			return 0
		}
		return min(100, done*100/total)
	},
	"rps": func(v float64) string { return fmt.Sprintf("%.0f", v) },
	"labels": func(m map[string]string) []string {
		out := make([]string, 0, len(m))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			out = append(out, k+":"+m[k])
		}
		return out
	},
	"active":     func(s job.Status) bool { return !s.Terminal() },
	"trendCell":  trendPointLabel,
	"changeCell": changePointLabel,
	"pct":        func(v float64) string { return fmt.Sprintf("%+.1f %%", v*100) },
	"join":       strings.Join,
	// finalEvents tells live.js the stream's final event types, from the
	// one table of event names rather than a copy in the script.
	"finalEvents": job.FinalEvents,
	"bar": func(p int) template.HTMLAttr {
		// A progress element needs no inline style, so the CSP stays strict.
		return template.HTMLAttr(fmt.Sprintf(`value="%d" max="100"`, p)) //nolint:gosec // an integer
	},
}

func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	}
	return fmt.Sprintf("%d days ago", int(d.Hours()/24))
}
