// Package initcmd is `custodian init`: .asdd/config.yaml with the seed's
// defaults and an empty ASDD manifest.
package initcmd
