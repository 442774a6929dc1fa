// Package monitor is `custodian monitor`: silent ACTIVE agents flagged.
package monitor
