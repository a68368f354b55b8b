package job

import "strings"

// RedactURL hides the userinfo of a URL ("http://user:pw@host/" becomes
// "http://xxxxx@host/") for error messages, also in strings url.Parse
// refuses: credentials a client put in a target or webhook URL must never
// come back in a 422 (nor in the logs that record it). Every package that
// quotes a client's URL in an error uses it.
func RedactURL(raw string) string {
	prefix, rest := "", raw
	if i := strings.Index(raw, "://"); i >= 0 {
		prefix, rest = raw[:i+3], raw[i+3:]
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		return prefix + "xxxxx" + rest[at:]
	}
	return raw
}
