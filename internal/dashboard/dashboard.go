package dashboard

import (
	"context"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/benchq/benchq/internal/client"
)

var (
	//go:embed templates
	templateFS embed.FS
	//go:embed static
	staticFS embed.FS
)

// ContentSecurityPolicy is sent with every page: scripts, styles, images
// and event streams come from the dashboard itself, nothing inline and
// nothing from anywhere else.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Prefix is where the dashboard is mounted.
const Prefix = "/ui"

// Config is what the dashboard needs.
type Config struct {
	// API serves the /v1 routes; the dashboard calls it in process.
	API http.Handler
	// Log gets one line per page that failed to render.
	Log *slog.Logger
	// Monitor links the queue monitor for admin keys when set.
	Monitor bool
}

// Handler serves every /ui page but the event stream and the sign-in and
// sign-out POSTs, which the API serves itself.
type Handler struct {
	cfg   Config
	mux   *http.ServeMux
	pages map[string]*template.Template
}

// New builds the dashboard's handler.
func New(cfg Config) (*Handler, error) {
	if cfg.API == nil {
		return nil, fmt.Errorf("dashboard: no API handler")
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	h := &Handler{cfg: cfg, mux: http.NewServeMux(), pages: map[string]*template.Template{}}
	for _, name := range []string{"jobs", "job", "compare", "new", "trends", "signin", "error"} {
		t, err := template.New("layout.tmpl").Funcs(funcs).ParseFS(templateFS, "templates/layout.tmpl", "templates/"+name+".tmpl")
		if err != nil {
			return nil, fmt.Errorf("dashboard: parse %s template: %w", name, err)
		}
		h.pages[name] = t
	}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, fmt.Errorf("dashboard: static assets: %w", err)
	}
	h.mux.Handle("GET "+Prefix+"/static/", http.StripPrefix(Prefix+"/static/", cacheable(http.FileServerFS(static))))
	h.mux.HandleFunc("GET "+Prefix+"/{$}", h.jobsPage)
	h.mux.HandleFunc("GET "+Prefix+"/jobs/{id}", h.jobPage)
	h.mux.HandleFunc("GET "+Prefix+"/jobs/{id}/report", h.reportFile)
	h.mux.HandleFunc("POST "+Prefix+"/jobs/{id}/cancel", h.cancelJob)
	h.mux.HandleFunc("GET "+Prefix+"/compare", h.comparePage)
	h.mux.HandleFunc("GET "+Prefix+"/compare/chart.svg", h.compareChart)
	h.mux.HandleFunc("GET "+Prefix+"/trends", h.trendsPage)
	h.mux.HandleFunc("GET "+Prefix+"/trends/chart.svg", h.trendChart)
	h.mux.HandleFunc("GET "+Prefix+"/new", h.newPage)
	h.mux.HandleFunc("POST "+Prefix+"/new", h.submitJob)
	h.mux.HandleFunc("GET "+Prefix+"/signin", func(w http.ResponseWriter, r *http.Request) {
		h.SignInPage(w, r, http.StatusOK, "")
	})
	h.mux.HandleFunc(Prefix+"/", func(w http.ResponseWriter, r *http.Request) {
		h.errorPage(w, r, http.StatusNotFound, "There is no such page.")
	})
	return h, nil
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", ContentSecurityPolicy)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "same-origin")
	h.mux.ServeHTTP(w, r)
}

// cacheable lets a browser keep the embedded assets for an hour: they
// change only with the binary.
func cacheable(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "private, max-age=3600")
		next.ServeHTTP(w, r)
	})
}

// Caller is who a dashboard request is, as the API authenticated it.
type Caller struct {
	key string // sent to the API in process, never rendered
	// KeyID names the key ("key_..."), or is empty in the open mode.
	KeyID string
	Admin bool
}

// Open reports whether the caller came without a key, in the open mode.
func (c Caller) Open() bool { return c.KeyID == "" }

type callerKey struct{}

// WithCaller hands the dashboard a request with the credentials the API
// authenticated it with: key is the API key of the session ("" in the
// open mode), which the dashboard sends with each in-process API call.
func WithCaller(r *http.Request, key, keyID string, admin bool) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), callerKey{}, Caller{key: key, KeyID: keyID, Admin: admin}))
}

func callerOf(r *http.Request) (Caller, bool) {
	c, ok := r.Context().Value(callerKey{}).(Caller)
	return c, ok
}

// apiClient is the API client of one dashboard request: the caller's key,
// the API's handler in process.
func (h *Handler) apiClient(r *http.Request) *client.Client {
	c, _ := callerOf(r)
	return &client.Client{
		BaseURL:        "http://" + r.Host,
		Key:            c.key,
		HTTP:           &http.Client{Transport: inProcess{api: h.cfg.API, remote: r.RemoteAddr}},
		RequestTimeout: 30 * time.Second,
	}
}

type signInData struct {
	base
	Next    string
	Message string
}

// SignInPage renders the sign-in form, with msg saying why the last
// attempt failed. The key typed is never rendered back.
func (h *Handler) SignInPage(w http.ResponseWriter, r *http.Request, status int, msg string) {
	next := r.FormValue("next")
	if !strings.HasPrefix(next, Prefix+"/") || strings.HasPrefix(next, "//") {
		next = Prefix + "/"
	}
	b := h.base(r, "Sign in", "")
	b.Caller = nil
	h.render(w, r, status, "signin", signInData{base: b, Next: next, Message: msg})
}
