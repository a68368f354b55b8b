package abcmd

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// normalizeURL checks a URL as ab's parse_url does and returns it with a
// scheme: "http://" or "https://" may be omitted (ab assumes http), and a
// "/" must follow the host ("ab: invalid URL" otherwise). Schemes other
// than http and https are invalid; ab would take "ftp:" for a host name.
func normalizeURL(raw string) (string, error) {
	scheme, rest := "http", raw
	switch {
	case strings.HasPrefix(raw, "http://"):
		rest = raw[len("http://"):]
	case strings.HasPrefix(raw, "https://"):
		scheme, rest = "https", raw[len("https://"):]
	case strings.Contains(raw, "://"):
		return "", usageErr("invalid URL")
	}
	slash := strings.IndexByte(rest, '/')
	if slash <= 0 {
		return "", usageErr("invalid URL")
	}
	full := scheme + "://" + rest
	u, err := url.Parse(full)
	if err != nil || u.Hostname() == "" || u.User != nil || strings.ContainsAny(full, " \t\r\n") {
		return "", usageErr("invalid URL")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", usageErr("invalid URL")
		}
	}
	return full, nil
}

// ParseURLList reads a URL file as http_load does (--urls, and http_load's
// url_file): one URL per line; blank lines and lines starting with '#' are
// skipped. Every URL is checked as ab checks its own; the error names the
// first bad line. An empty list is an error.
func ParseURLList(text string) ([]string, error) {
	var urls []string
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		u, err := normalizeURL(line)
		if err != nil {
			return nil, inputErr(fmt.Sprintf("invalid URL on line %d: %q", i+1, line))
		}
		urls = append(urls, u)
	}
	if len(urls) == 0 {
		return nil, inputErr("no URL in the URL list")
	}
	return urls, nil
}
