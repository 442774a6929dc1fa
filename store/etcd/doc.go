// Package etcd is Custodian's store backend for fleets of agents on many
// machines: the store contract (package store) on an etcd v3 cluster, through
// the official client (go.etcd.io/etcd/client/v3).
//
// # Keys
//
// Under a prefix P (default "/custodian/", always ending in "/"):
//
//	P/doc/<key>                        the document: header line + value
//	P/journal/<key>//<rev, 20 digits>  one journal record per commit
//	P/lock/<name>                      a lock, attached to a lease
//	P/heartbeat/<name>                 a heartbeat, attached to a lease
//
// <key> is the document key (".asdd/state/manifest.json"). The "//" before
// the revision cannot occur in a valid key (keys are clean paths), so the
// journal of one document never shares a prefix with another's; revisions
// are zero-padded so that etcd's byte order is revision order.
//
// The document value is one JSON header line followed by the value exactly
// as the file backend's snapshot holds it (two-space indented):
//
//	{"rev":3,"hash":"sha256:<hash of record 3>","sum":"sha256:<canonical sum>"}
//	{
//	  "project_context": …
//	}
//
// A journal record is the exact line of the file backend's journal, without
// its newline (package store: Record, Seal): the same hash chain, so records
// copy between backends byte for byte and verify the same way.
//
// # Commit
//
// Update runs the function against the document (read from etcd, or the
// cached copy of the last commit through this Store), then commits with one
// transaction:
//
//	If   mod_revision(P/doc/<key>) == the revision read
//	     create_revision(P/journal/<key>//<rev+1>) == 0   (one per record)
//	Then put P/doc/<key>, put P/journal/<key>//<rev+1> …
//	Else get P/doc/<key>
//
// The transaction is the commit point: etcd acknowledges it once a majority
// of members have it in their fsynced raft log. When it fails, the Else
// branch hands back the current document and the function runs again on it
// at once; after a second failure in a row the writer backs off a random,
// growing while (up to 32 ms) and reads the document again. At most
// store.MaxRetries attempts, then CONFLICT. A function that rejects, or
// proposes no change, against a cached copy is re-run on a fresh read
// before its outcome is returned, so every outcome is decided on the latest
// value.
//
// Concurrent Updates of one document through one Store are group-committed:
// the functions run one after another, each on the value the previous one
// produced, and all their records go to etcd in one transaction (at most
// 100 records, and within the request size limit; the rest wait for the
// next). Every outcome of a batch — commit, rejection, no change — is
// returned only once the transaction succeeded, so each was decided on the
// latest committed value plus the changes serialised before it; if the
// transaction fails, the whole batch is decided again. Contention is thus
// only between processes, as with the file backend's lock, and a daemon on
// etcd batches by itself.
//
// A commit whose transaction would exceed etcd's request size limit
// (--max-request-bytes, 1.5 MiB by default; Options.MaxRequestBytes) is
// refused up front with INVALID_INPUT naming the sizes.
//
// # Reads, history, watch
//
// Get is a linearizable read of the document key. History, GetAt and Verify
// read the document and its records at one etcd revision, so they see one
// consistent state. Watch replays the records after the requested revision
// as of one etcd revision R, then follows an etcd watch of the journal range
// from R+1: no commit falls between the two. If the watch is cancelled or
// compacted, it resumes from the last record delivered.
//
// # Leases
//
// Acquire takes a named lock as a key attached to an etcd lease: the lease's
// expiry frees the lock with no one's help, so a crashed holder cannot keep
// it. Beat records a heartbeat the same way; a heartbeat that is not renewed
// disappears.
package etcd
