// Package otlpencodingextension is an empty stand-in. Only the file exporter's tests import the
// real module, and `go mod tidy` (run by the Collector Builder) resolves test imports too; the
// module proxy reachable here refuses that module's v0.165.0 zip (403), so the build points it at
// this directory. Nothing in the built Collector imports it.
package otlpencodingextension
