#!/usr/bin/env bash
# Regenerates the OpenAPI document from the swag annotations in api/.
# Usage: scripts/openapi.sh [output-dir]   (default: openapi)
# CI runs it into a temporary directory and diffs against openapi/ to catch a
# stale document. These flags are the only place swag's invocation is spelled.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-openapi}"
swag="$(command -v swag || echo "$(go env GOPATH)/bin/swag")"
"$swag" init \
  --quiet \
  --generalInfo server.go \
  --dir ./api,./internal/job,./internal/analysis,./internal/abreport,./internal/measure,./internal/monitor,./internal/template \
  --output "$out" \
  --outputTypes go,json,yaml \
  --packageName openapi \
  --parseInternal \
  --overridesFile .swaggo
