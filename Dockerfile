# syntax=docker/dockerfile:1
# Build: a static binary (no cgo), so the final image needs no libc.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags="-s -w" -o /out/benchq ./cmd/benchq

# Run: distroless static, as the image's unprivileged user.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/benchq /usr/local/bin/benchq
USER nonroot:nonroot
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/benchq"]
CMD ["serve"]
