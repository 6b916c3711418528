package clientutil

import (
	"fmt"
	"io"

	kudov1beta1 "github.com/kudo-ng/kudo/api/v1beta1"
	"github.com/kudo-ng/kudo/internal/params"
)

// WarnPlainSensitive warns that the values of sensitive parameters given
// on the command line will be stored in the Instance's spec, where whoever
// reads the Instance reads them.
func WarnPlainSensitive(w io.Writer, a params.Assigned, defs []kudov1beta1.Parameter) {
	for _, name := range a.PlainSensitive(defs) {
		_, _ = fmt.Fprintf(w, "Warning: parameter %s is sensitive, and its value is stored in the Instance's spec: "+
			"keep it in a Secret and pass -p %s=%sSECRET/KEY\n", name, name, params.SecretPrefix)
	}
}
