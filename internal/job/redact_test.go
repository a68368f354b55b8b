package job

import "testing"

func TestRedactURL(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"http://127.0.0.1:8081/x", "http://127.0.0.1:8081/x"},
		{"http://user:s3cret@127.0.0.1:8o/", "http://xxxxx@127.0.0.1:8o/"},
		{"http://s3cret@/x", "http://xxxxx@/x"},
		{"http://a@b:s3cret@host/p@q", "http://xxxxx@host/p@q"},
		{"user:s3cret@host", "xxxxx@host"},
		{"http://host/path?u=a@b", "http://host/path?u=a@b"},
	}
	for _, tt := range tests {
		if got := RedactURL(tt.raw); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}
