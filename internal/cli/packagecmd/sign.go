package packagecmd

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kudo-ng/kudo/internal/cli/resolve"
	"github.com/kudo-ng/kudo/internal/ocipkg"
)

// PasswordEnv holds the password of an encrypted private key, as cosign
// reads it.
const PasswordEnv = "COSIGN_PASSWORD"

// maxKeyBytes bounds a key file: a PEM key is a few KiB at most.
const maxKeyBytes = 64 << 10

// SignOptions are the flags of `package sign`.
type SignOptions struct {
	Ref, Key string
	Registry resolve.Registry
}

func newSignCmd(streams genericiooptions.IOStreams) *cobra.Command {
	opts := &SignOptions{}
	cmd := &cobra.Command{
		Use:   "sign oci://REGISTRY/REPOSITORY@sha256:DIGEST --key cosign.key",
		Short: "Sign a package, or a Helm chart, in an OCI registry with a private key, as cosign sign --key signs an image",
		Long: "Sign a package in an OCI registry: a Sigstore bundle that refers to its manifest, in cosign v3's format,\n" +
			"so that cosign verify --key checks it too. The key is cosign's (its password in " + PasswordEnv + ")\n" +
			"or a PEM private key. Name the package by digest: a tag may move after it is read.",
		Example: "  kubectl kudo package sign oci://registry.example.com/packages/zookeeper@sha256:... --key cosign.key",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			return RunSign(cmd.Context(), streams, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Key, "key", "", "Private key to sign with (cosign generate-key-pair's, or PEM)")
	_ = cmd.MarkFlagRequired("key")
	opts.Registry.AddFlags(cmd.Flags())
	return cmd
}

// RunSign signs the package and prints the digest signed and the
// signature's.
func RunSign(ctx context.Context, streams genericiooptions.IOStreams, opts *SignOptions) error {
	data, err := readKey(opts.Key)
	if err != nil {
		return err
	}
	signer, err := ocipkg.LoadSigner(data, []byte(os.Getenv(PasswordEnv)))
	if err != nil {
		return fmt.Errorf("--key %s: %w", opts.Key, err)
	}
	c, err := opts.Registry.Client()
	if err != nil {
		return err
	}
	signed, err := c.Sign(ctx, opts.Ref, signer)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(streams.Out, "Signed: %s\nDigest: %s\nSignature: %s\n", opts.Ref, signed.Digest, signed.Signature)
	return err
}

// readPublicKeys reads the public keys of the files, as authorities
// named by their files.
func readPublicKeys(files []string) ([]ocipkg.Authority, error) {
	keys := make([]ocipkg.Authority, 0, len(files))
	for _, f := range files {
		data, err := readKey(f)
		if err != nil {
			return nil, err
		}
		key, err := ocipkg.LoadPublicKey(data)
		if err != nil {
			return nil, fmt.Errorf("--key %s: %w", f, err)
		}
		authority, err := ocipkg.KeyAuthority(f, key)
		if err != nil {
			return nil, fmt.Errorf("--key: %w", err)
		}
		keys = append(keys, authority)
	}
	return keys, nil
}

// readKey reads a key file, within maxKeyBytes.
func readKey(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("--key: %w", err)
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, maxKeyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("--key %s: %w", file, err)
	}
	if len(data) > maxKeyBytes {
		return nil, fmt.Errorf("--key %s: more than %d bytes, which no PEM key is", file, maxKeyBytes)
	}
	return data, nil
}
