// Package board is the web dashboard that `custodian serve` mounts at /:
// the pipeline's state at a glance, live, in a browser, with no network
// access beyond the daemon (its HTML, JavaScript and CSS are embedded with
// embed.FS; no CDN, no framework).
//
// The page shows the slices as cards in phase columns (DISCOVERY … DONE,
// then BLOCKED), each with its CCS, its confidence chain as a small bar
// chart with each agent's minimum and the weakest link marked, its lock
// holder, blockers, drift marks (artifacts changed or missing on disk) and
// time in phase; agent heartbeats with their age and state; the open
// escalations with their evidence and notice; the journal as a timeline
// with each commit's diff (its JSON patch); the implementation plan
// (.impl/manifest.json, phases × tasks) and the cycles
// (.workflow/.cycle/*.json).
//
// Data flow: the handler reads the documents through the daemon's
// application layer (Options.App). The page reads /board.json (View:
// asdd.NewBoard plus what only a picture needs, built by NewView, a pure
// function) and /plan.json, then follows the daemon's GET /v1/watch stream
// (Server-Sent Events) and redraws on every commit, without a reload. The
// journal comes from GET /v1/history and the same stream.
//
// The dashboard is read-only unless the admin token is entered: resolve,
// approve and review post to the daemon's POST /v1/asdd/{op}, which refuses
// them over TCP without the token (401; server.Options.AdminToken).
package board
