package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSchedulesAPI: a template's schedule is checked when it is saved,
// each bad field named; GET /v1/schedules lists it with its next run;
// pause and resume flip it, and a paused schedule has no next run.
func TestSchedulesAPI(t *testing.T) {
	m := startOnRedis(t)
	put := func(schedule map[string]any) (*http.Response, []byte) {
		body, _ := json.Marshal(map[string]any{
			"spec":     map[string]any{"targets": []map[string]any{{"url": "http://127.0.0.1:1/"}}},
			"schedule": schedule,
		})
		return call(t, http.MethodPut, m.URL()+"/v1/templates/nightly", body)
	}
	bad := []struct {
		schedule map[string]any
		field    string
	}{
		{map[string]any{"cron": "61 * * * *"}, "schedule.cron"},
		{map[string]any{"cron": "* * * * * *"}, "schedule.cron"},
		{map[string]any{"cron": "0 3 * * *", "timezone": "Mars/Olympus"}, "schedule.timezone"},
		{map[string]any{"cron": "0 * * * *", "jitter": "2h"}, "schedule.jitter"},
		{map[string]any{"cron": "0 * * * *", "missed": "all"}, "schedule.missed"},
	}
	for _, tt := range bad {
		resp, b := put(tt.schedule)
		if resp.StatusCode != http.StatusUnprocessableEntity || resp.Header.Get("Content-Type") != "application/problem+json" ||
			!strings.Contains(string(b), `"field":"`+tt.field+`"`) {
			t.Errorf("PUT with schedule %v = %d %s, want 422 problem+json naming %s", tt.schedule, resp.StatusCode, b, tt.field)
		}
	}
	if resp, b := put(map[string]any{"cron": "0 3 * * *", "timezone": "Europe/Berlin", "jitter": "5m"}); resp.StatusCode != http.StatusCreated {
		t.Fatalf("PUT a valid schedule = %d %s", resp.StatusCode, b)
	}
	type sched struct {
		Template string     `json:"template"`
		Cron     string     `json:"cron"`
		Timezone string     `json:"timezone"`
		Paused   bool       `json:"paused"`
		Missed   string     `json:"missed"`
		NextRun  *time.Time `json:"next_run"`
		LastRuns []any      `json:"last_runs"`
	}
	list := func() []sched {
		resp, b := call(t, http.MethodGet, m.URL()+"/v1/schedules", nil)
		var out struct {
			Schedules []sched `json:"schedules"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &out) != nil {
			t.Fatalf("GET /v1/schedules = %d %s", resp.StatusCode, b)
		}
		return out.Schedules
	}
	got := list()
	if len(got) != 1 || got[0].Template != "nightly" || got[0].Missed != "skip" || got[0].NextRun == nil || got[0].LastRuns == nil {
		t.Fatalf("schedules = %+v, want nightly with its next run and an empty last_runs", got)
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	if nr := got[0].NextRun.In(berlin); nr.Hour() != 3 || nr.Minute() > 5 || time.Until(nr) > 25*time.Hour {
		t.Errorf("next run %s, want 03:00-03:05 Berlin within a day", nr)
	}
	for _, step := range []struct {
		path   string
		paused bool
	}{{"pause", true}, {"resume", false}} {
		resp, b := call(t, http.MethodPost, m.URL()+"/v1/schedules/nightly/"+step.path, nil)
		var s sched
		if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &s) != nil || s.Paused != step.paused || (s.NextRun == nil) != step.paused {
			t.Errorf("POST %s = %d %s, want paused %v", step.path, resp.StatusCode, b, step.paused)
		}
		if l := list(); l[0].Paused != step.paused {
			t.Errorf("after %s the list says paused %v", step.path, l[0].Paused)
		}
	}
	if resp, _ := call(t, http.MethodPost, m.URL()+"/v1/schedules/nope/pause", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("pause of no template = %d, want 404", resp.StatusCode)
	}
}
