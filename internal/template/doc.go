// Package template is a saved job: a job spec with placeholders
// ({{commit}}, {{branch}}, {{target_url}}, {{pr}}, {{repo}} and names the
// template declares in Values), the CI triggers that run it, and a
// schedule the scheduler reads. Render turns a template and the values of
// one run into a job.Spec, which the caller validates exactly as a
// submitted one. The package knows nothing of Redis or HTTP: the store
// keeps templates, the API creates their jobs.
package template
