package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/benchq/benchq/internal/analysis"
	"github.com/benchq/benchq/internal/job"
)

// TemplateSummary is what the client reads of a template.
type TemplateSummary struct {
	Name  string `json:"name"`
	Owner string `json:"owner"`
}

// Templates GETs /v1/templates: the caller's templates (an admin's: every
// key's).
func (c *Client) Templates(ctx context.Context) ([]TemplateSummary, error) {
	var out struct {
		Templates []TemplateSummary `json:"templates"`
	}
	_, err := c.call(ctx, http.MethodGet, "/v1/templates", nil, nil, &out, nil)
	return out.Templates, err
}

// TrendQuery selects a trend: a template's finished jobs, one metric, and
// optionally one target and one branch.
type TrendQuery struct {
	Template, Metric, Target, Branch string
	// ChangePoints asks for the change points of the series too.
	ChangePoints bool
}

// Values are q as /v1/trends reads them.
func (q TrendQuery) Values() url.Values {
	v := url.Values{"template": {q.Template}, "metric": {q.Metric}}
	if q.Target != "" {
		v.Set("target", q.Target)
	}
	if q.Branch != "" {
		v.Set("branch", q.Branch)
	}
	if q.ChangePoints {
		v.Set("change_points", "true")
	}
	return v
}

// Trend is a metric's series across a template's jobs, oldest first.
type Trend struct {
	Template string                `json:"template"`
	Metric   string                `json:"metric"`
	Target   string                `json:"target,omitempty"`
	Branch   string                `json:"branch,omitempty"`
	Points   []analysis.TrendPoint `json:"points"`
	// ChangePoints are the series' shifts, when asked for.
	ChangePoints []job.ChangePoint `json:"change_points,omitempty"`
}

// Trend GETs /v1/trends for q.
func (c *Client) Trend(ctx context.Context, q TrendQuery) (Trend, error) {
	var t Trend
	_, err := c.call(ctx, http.MethodGet, "/v1/trends?"+q.Values().Encode(), nil, nil, &t, nil)
	return t, err
}
