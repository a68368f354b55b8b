package job

// TargetURL is one address a job sends load to, with the spec field it
// came from ("targets[1].url", "targets[0].ab", "targets[2].urls[3]").
type TargetURL struct {
	Field string
	URL   string
}

// TargetURLs lists every address the targets of s send load to, in spec
// order, for checks that apply to load and not to webhooks (target
// verification). A target whose form is invalid lists nothing: Validate
// reports it.
func (s Spec) TargetURLs() []TargetURL {
	var out []TargetURL
	for i := range s.Targets {
		src, errs := s.resolveTarget(i)
		if len(errs) > 0 {
			continue
		}
		for k, u := range src.urls {
			out = append(out, TargetURL{Field: src.urlFields[k], URL: u})
		}
	}
	return out
}
