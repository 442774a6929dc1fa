package wire

// RebuildRequest is the body of POST /v1/rebuild (a human decision):
// rebuild a lost or corrupt ASDD manifest, from its journal when intact,
// else from a scan of the project's files, which the custodian reads
// itself. Force scans the files even though the manifest is readable
// (keeping it aside); it moves files, so a running daemon refuses it.
type RebuildRequest struct {
	Force bool   `json:"force,omitempty"`
	Actor string `json:"actor,omitempty"`
}

// RebuildResponse is what a rebuild did.
type RebuildResponse struct {
	// Action is "journal" (the store restored the manifest from its intact
	// journal) or "scan" (rebuilt from the files).
	Action    string         `json:"action"`
	Why       string         `json:"why"`
	Revision  uint64         `json:"revision"`
	KeptAside []string       `json:"kept_aside"`
	Slices    []RebuiltSlice `json:"slices"`
	Warnings  []string       `json:"warnings"`
}

// RebuiltSlice is one slice a scan reconstructed.
type RebuiltSlice struct {
	ID        string   `json:"slice_id"`
	Status    string   `json:"status"`
	Artifacts int      `json:"artifacts"`
	Traces    int      `json:"traces"`
	Guessed   []string `json:"needs_human_review"`
	Evidence  []string `json:"evidence"`
}
