// Package demo is `custodian demo` (a simulated ASDD pipeline) and `custodian
// demo-agent` (its scripted agent).
package demo
