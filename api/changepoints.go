package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/analysis"
	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

// ChangePointStore keeps the change points of templates' histories;
// *store.Store implements it.
type ChangePointStore interface {
	RecordChangePoints(ctx context.Context, owner, template string, found []job.ChangePoint, announce bool) (kept, fresh []job.ChangePoint, err error)
	AcknowledgeChangePoint(ctx context.Context, id, who string, at time.Time, allowed func(owner string) bool) (job.ChangePoint, error)
}

// errNoChangePoints answers change point requests of a server built
// without a change point store.
var errNoChangePoints = errors.New("change points are not configured on this server")

// testbedID is the form of job.Testbed.ID.
var testbedID = regexp.MustCompile(`^[0-9a-f]{12}$`)

// trendChanges is what a trend request asks of change points.
type trendChanges struct {
	analysis.ChangeQuery
	on bool
	// testbed is the testbed query parameter as given, which also narrows
	// the points.
	testbed string
	// maxPSet and minMagSet: the query gave them; else the newest job's
	// options (or the defaults) apply.
	maxPSet, minMagSet bool
}

// changeQuery reads change_points, testbed, max_pvalue and min_magnitude.
func changeQuery(c echo.Context) (trendChanges, error) {
	var tc trendChanges
	var err error
	if tc.on, err = boolQuery(c, "change_points"); err != nil {
		return tc, err
	}
	tc.testbed = c.QueryParam("testbed")
	if tc.testbed != "" && tc.testbed != analysis.TestbedAny && tc.testbed != job.TestbedMixed && !testbedID.MatchString(tc.testbed) {
		return tc, queryError("testbed", "want a testbed id (12 hex digits, as each point's testbed) or any")
	}
	tc.Testbed = tc.testbed
	if v := c.QueryParam("max_pvalue"); v != "" {
		p, err := strconv.ParseFloat(v, 64)
		if err != nil || !job.ValidMaxPValue(p) {
			return tc, queryError("max_pvalue", "want a p-value above 0 and at most 1, such as 0.001")
		}
		tc.MaxPValue, tc.maxPSet = p, true
	}
	if v := c.QueryParam("min_magnitude"); v != "" {
		m, err := strconv.ParseFloat(v, 64)
		if err != nil || !job.ValidMinMagnitude(m) {
			return tc, queryError("min_magnitude", "want a relative change from 0 to 100, such as 0.05 for 5 %%")
		}
		tc.MinMagnitude, tc.minMagSet = m, true
	}
	for _, f := range []struct {
		name string
		set  bool
	}{{"max_pvalue", tc.maxPSet}, {"min_magnitude", tc.minMagSet}} {
		if f.set && !tc.on {
			return tc, queryError(f.name, "%s tunes change points: ask for them with change_points=true", f.name)
		}
	}
	return tc, nil
}

// trendChangePoints finds the change points of tc's series in jobs (newest
// first, as jobend.History gives them) and keeps them, so each keeps its
// id and acknowledgement from one request to the next. The newest job's
// change_points options apply where the query gives none: the template's,
// as its latest job carries them.
func (s *Server) trendChangePoints(ctx context.Context, owner string, tc trendChanges, jobs []analysis.TrendJob) ([]job.ChangePoint, error) {
	if s.changePoints == nil {
		return nil, errcode.Wrap(errNoChangePoints, errcode.Unavailable, errNoChangePoints.Error())
	}
	var opts *job.ChangePointOptions
	if len(jobs) > 0 {
		opts = jobs[0].Spec.ChangePoints
	}
	maxP, minMag := opts.Values()
	if !tc.maxPSet {
		tc.MaxPValue = maxP
	}
	if !tc.minMagSet {
		tc.MinMagnitude = minMag
	}
	found := analysis.ChangePoints(tc.ChangeQuery, jobs, time.Now())
	if len(found) == 0 {
		return []job.ChangePoint{}, nil
	}
	kept, _, err := s.changePoints.RecordChangePoints(ctx, owner, tc.Template, found, false)
	if err != nil {
		return nil, fmt.Errorf("api: trend change points: %w", err)
	}
	return kept, nil
}

// handleAcknowledgeChangePoint marks a change point as expected.
//
//	@Summary		Acknowledge a change point
//	@Description	Marks the change point as expected (a known cost of a change, a new baseline): it stays listed, acknowledged, with who (the API key id) and when; the trend chart draws it dotted grey instead of dashed red. The template's owner or an admin may acknowledge it; to anyone else it does not exist (404). Acknowledging again changes nothing and answers the point as it is.
//	@Tags			trends
//	@Produce		json
//	@Param			id	path		string	true	"change point id, from GET /v1/trends?change_points=true"
//	@Success		200	{object}	job.ChangePoint
//	@Failure		400	{object}	Problem	"bad-query: the id is not a change point id (field id)"
//	@Failure		401	{object}	Problem	"no valid API key"
//	@Failure		404	{object}	Problem	"no such change point, or another key's"
//	@Failure		503	{object}	Problem	"store-unavailable: Redis unreachable; retry after the Retry-After header"
//	@Header			503	{integer}	Retry-After	"seconds"
//	@Security		BearerAuth
//	@Router			/v1/trends/change-points/{id}/acknowledge [post]
func (s *Server) handleAcknowledgeChangePoint(c echo.Context) error {
	id := c.Param("id")
	if !job.ValidChangePointID(id) {
		return errcode.Newf(errcode.BadQuery, "%q is not a change point id: want cp_ and 26 letters and digits, as GET /v1/trends?change_points=true lists them", id).WithField("id")
	}
	if s.changePoints == nil {
		return errcode.Wrap(errNoChangePoints, errcode.Unavailable, errNoChangePoints.Error())
	}
	p := principalOf(c)
	if p.KeyID == "" {
		return errcode.New(errcode.NotFound, "no such change point")
	}
	allowed := func(owner string) bool { return p.Admin || owner == p.KeyID }
	cp, err := s.changePoints.AcknowledgeChangePoint(c.Request().Context(), id, p.KeyID, time.Now(), allowed)
	if errors.Is(err, store.ErrNotFound) {
		return errcode.Wrapf(err, errcode.NotFound, "no change point %s", id)
	}
	if err != nil {
		return fmt.Errorf("api: acknowledge: %w", err)
	}
	return c.JSON(http.StatusOK, cp)
}
