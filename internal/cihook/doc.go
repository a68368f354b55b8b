// Package cihook reads the webhooks CI systems send: it verifies a
// delivery's signature over the raw body (GitHub's X-Hub-Signature-256,
// GitLab's X-Gitlab-Token), then parses the push and pull/merge request
// events into one Event. Before that, GitHubRepository and GitLabProject
// read the one name an unverified body gives, which picks the secrets to
// try. It knows nothing of templates, Redis or HTTP routing; the API maps
// an Event to the templates it runs.
package cihook
