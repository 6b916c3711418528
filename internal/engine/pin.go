package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
)

// OperatorVersionDigest is the digest of an OperatorVersion's content, its
// spec as JSON: what its Instances run. Metadata (a restore's new uid) does
// not count. A field new to the API must be omitempty, or the digest of
// every stored OperatorVersion changes with the manager
// (TestTheDigestOfAStoredOperatorVersionStaysTheSame).
func OperatorVersionDigest(ov *kudov1beta1.OperatorVersion) string {
	// Strings, maps, slices and pointers to them: it cannot fail. Map keys
	// are written in order, so one content has one text.
	b, err := json.Marshal(ov.Spec)
	if err != nil {
		panic(fmt.Sprintf("marshalling the spec of OperatorVersion %s: %v", ov.Name, err))
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// PinOperatorVersion records the content of the OperatorVersion an Instance
// ran with before kudo-ng pinned it (an Instance of an earlier release, or
// KUDO's), as its first reconcile finds it.
func PinOperatorVersion(i *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion) {
	if i.Status.AppliedOperatorVersion == ov.Name && i.Status.AppliedOperatorVersionDigest == "" {
		i.Status.AppliedOperatorVersionDigest = OperatorVersionDigest(ov)
	}
}

// OperatorVersionReplaced says why the Instance refuses its OperatorVersion,
// nil when it does not: one of the name it ran with, made again with other
// content, is another package's code, and runs nothing of it. An upgrade to
// another name moves on; a restore that makes the same content again keeps
// the pin.
func OperatorVersionReplaced(i *kudov1beta1.Instance, ov *kudov1beta1.OperatorVersion) error {
	pinned := i.Status.AppliedOperatorVersionDigest
	if i.Status.AppliedOperatorVersion != ov.Name || pinned == "" {
		return nil
	}
	if now := OperatorVersionDigest(ov); now != pinned {
		return fmt.Errorf("OperatorVersion %s/%s is not the one this Instance ran with: its content is %s, and was %s. "+
			"It runs nothing of it: upgrade to another version, or, to accept this content, "+
			"remove status.appliedOperatorVersionDigest", ov.Namespace, ov.Name, now, pinned)
	}
	return nil
}
