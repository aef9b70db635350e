package backup

// Off-site copies in an S3-compatible bucket, through minio-go: it speaks to AWS S3, MinIO,
// Garage, Backblaze B2 and the other S3 APIs with path-style or virtual-hosted addressing, and
// it adds about 1.5 MiB to the stripped binary where the AWS SDK's S3 client adds about 5.9 MiB
// (both measured on linux/amd64 with -trimpath -ldflags='-s -w').

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3Config says where off-site copies go and how to reach them.
type S3Config struct {
	// URL is s3://BUCKET/PREFIX: uploads go under PREFIX (a folder: a "/" is added), named as
	// the local copies (ownsona-20261122T030000Z.db). For a restore it may name one object
	// (ending in .db), or a prefix whose newest copy of ours is taken.
	URL string
	// Endpoint is the S3 API's origin, https://HOST[:PORT] (http:// for a server on your own
	// network or loopback). If empty, AWS S3. A custom endpoint is addressed path-style
	// (https://HOST/BUCKET/KEY), which MinIO, Garage and B2 accept; AWS is addressed as it
	// prefers.
	Endpoint string
	// Region is the bucket's region (us-east-1, eu-central-003, garage). If empty, asked of
	// the server.
	Region string
	// Keep is how many of our copies stay under the prefix after an upload; older ones of
	// ours are deleted, and objects of other names never. If zero, 7.
	Keep int
	// Credentials sign the requests; LoadCredentials reads them.
	Credentials Credentials
	// Transport, if not nil, carries the requests (tests).
	Transport http.RoundTripper
}

// Remote is an S3 bucket and prefix that holds off-site copies. Safe for concurrent use.
type Remote struct {
	client *minio.Client
	bucket string
	key    string // URL's path without its leading "/": a prefix, or an object ending in .db
	keep   int
	creds  Credentials
}

// shaMeta is the user metadata (x-amz-meta-ownsona-sha256) that carries an uploaded copy's
// SHA-256, which Fetch verifies.
const shaMeta = "Ownsona-Sha256"

// maxRetries bounds minio-go's retries of one request: a scheduled backup that fails is
// taken again at the next interval anyway.
const maxRetries = 4

// ParseS3URL splits s3://BUCKET/PATH into the bucket and PATH (without its leading "/").
func ParseS3URL(s string) (bucket, key string, err error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "s3" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", "", fmt.Errorf("%q is not s3://BUCKET/PREFIX", s)
	}
	if b := u.Host; len(b) < 3 || len(b) > 63 || strings.Trim(b, "abcdefghijklmnopqrstuvwxyz0123456789.-") != "" {
		return "", "", fmt.Errorf("%q: the bucket %q is not a bucket name (3 to 63 of a-z, 0-9, '.', '-')", s, b)
	}
	key = strings.TrimPrefix(u.Path, "/")
	if strings.Contains("/"+key+"/", "/../") || strings.Contains(key, "//") {
		return "", "", fmt.Errorf("%q: the path holds an empty or .. segment", s)
	}
	return u.Host, key, nil
}

// NewRemote checks cfg and returns the Remote it describes. It does not reach the server.
func NewRemote(cfg S3Config) (*Remote, error) {
	bucket, key, err := ParseS3URL(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("backup-s3: %w", err)
	}
	if cfg.Keep == 0 {
		cfg.Keep = 7
	}
	if cfg.Keep < 1 {
		return nil, fmt.Errorf("backup-s3-keep: %d; keep at least 1", cfg.Keep)
	}
	host, secure, lookup := "s3.amazonaws.com", true, minio.BucketLookupAuto
	if cfg.Endpoint != "" {
		u, err := url.Parse(cfg.Endpoint)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || strings.Trim(u.Path, "/") != "" || u.User != nil || u.RawQuery != "" {
			return nil, fmt.Errorf("backup-s3-endpoint: %q is not an origin such as https://s3.eu-central-003.backblazeb2.com or http://127.0.0.1:9000", cfg.Endpoint)
		}
		host, secure, lookup = u.Host, u.Scheme == "https", minio.BucketLookupPath
	}
	opts := &minio.Options{
		Creds:        credentials.NewStaticV4(cfg.Credentials.AccessKeyID, cfg.Credentials.SecretAccessKey, ""),
		Secure:       secure,
		Region:       cfg.Region,
		BucketLookup: lookup,
		MaxRetries:   maxRetries,
	}
	if cfg.Transport != nil {
		opts.Transport = cfg.Transport
	}
	c, err := minio.New(host, opts)
	if err != nil {
		return nil, fmt.Errorf("backup-s3: %w", err)
	}
	return &Remote{client: c, bucket: bucket, key: key, keep: cfg.Keep, creds: cfg.Credentials}, nil
}

// String is the Remote's URL, s3://BUCKET/PATH.
func (r *Remote) String() string { return "s3://" + r.bucket + "/" + r.key }

// prefix is where uploads go: the URL's path as a folder ("" or "a/b/").
func (r *Remote) prefix() string {
	if r.key == "" || strings.HasSuffix(r.key, "/") {
		return r.key
	}
	return r.key + "/"
}

// url is the s3:// URL of key.
func (r *Remote) url(key string) string { return "s3://" + r.bucket + "/" + key }

// Upload copies the local backup at file to the prefix under file's base name, with its
// SHA-256 in the object's metadata and each part's MD5 (Content-MD5) for the server to check,
// and then deletes the oldest of our copies beyond Keep. It returns the object's s3:// URL.
// The local file is never changed.
func (r *Remote) Upload(ctx context.Context, file string) (string, error) {
	key := r.prefix() + filepath.Base(file)
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("upload %s: %w", file, err)
	}
	defer f.Close()
	h := sha256.New()
	size, err := io.Copy(h, f)
	if err != nil {
		return "", fmt.Errorf("upload %s: %w", file, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", fmt.Errorf("upload %s: %w", file, err)
	}
	_, err = r.client.PutObject(ctx, r.bucket, key, f, size, minio.PutObjectOptions{
		ContentType:    "application/octet-stream",
		UserMetadata:   map[string]string{shaMeta: hex.EncodeToString(h.Sum(nil))},
		SendContentMd5: true,
		NumThreads:     1, // one part in memory at a time: a Pi has little
	})
	if err != nil {
		return "", fmt.Errorf("upload to %s: %w", r.url(key), r.scrub(err))
	}
	if err := r.prune(ctx); err != nil {
		return r.url(key), err
	}
	return r.url(key), nil
}

// ours lists our copies under the prefix (named as the local ones, directly under it),
// oldest first: the names hold the time.
func (r *Remote) ours(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	for o := range r.client.ListObjects(ctx, r.bucket, minio.ListObjectsOptions{Prefix: prefix}) {
		if o.Err != nil {
			return nil, fmt.Errorf("list %s: %w", r.url(prefix), r.scrub(o.Err))
		}
		if _, ok := stampOf(strings.TrimPrefix(o.Key, prefix)); ok {
			keys = append(keys, o.Key)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

// prune deletes the oldest of our copies beyond Keep.
func (r *Remote) prune(ctx context.Context) error {
	keys, err := r.ours(ctx, r.prefix())
	if err != nil {
		return fmt.Errorf("retention: %w", err)
	}
	for len(keys) > r.keep {
		if err := r.client.RemoveObject(ctx, r.bucket, keys[0], minio.RemoveObjectOptions{}); err != nil {
			return fmt.Errorf("retention: delete %s: %w", r.url(keys[0]), r.scrub(err))
		}
		keys = keys[1:]
	}
	return nil
}

// ErrTooLarge: the object is larger than the caller allows.
var ErrTooLarge = errors.New("backup too large")

// Fetch downloads the backup the URL names (an object ending in .db, else the newest of our
// copies under the prefix) into a new file in dir (mode 0600, fsynced), and returns its path
// and the object's URL; the caller removes the file. An object larger than max bytes is
// refused before any byte is read (ErrTooLarge), no more than the size the server announced
// is read, and a copy that carries our SHA-256 must match it. On error nothing is left in dir.
func (r *Remote) Fetch(ctx context.Context, dir string, max int64) (file, from string, err error) {
	key := r.key
	if !strings.HasSuffix(key, ".db") {
		keys, err := r.ours(ctx, r.prefix())
		if err != nil {
			return "", "", err
		}
		if len(keys) == 0 {
			return "", "", fmt.Errorf("no backup named ownsona-TIME.db under %s", r.url(r.prefix()))
		}
		key = keys[len(keys)-1]
	}
	from = r.url(key)
	obj, err := r.client.GetObject(ctx, r.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return "", from, fmt.Errorf("download %s: %w", from, r.scrub(err))
	}
	defer obj.Close()
	info, err := obj.Stat()
	if err != nil {
		return "", from, fmt.Errorf("download %s: %w", from, r.scrub(err))
	}
	if info.Size > max {
		return "", from, fmt.Errorf("download %s: %w: %d bytes, more than the %d allowed", from, ErrTooLarge, info.Size, max)
	}
	f, err := os.CreateTemp(dir, ".ownsona-s3-*.db")
	if err != nil {
		return "", from, fmt.Errorf("download %s: %w", from, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return "", from, fmt.Errorf("download %s: %w", from, err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(obj, info.Size))
	if err != nil {
		return "", from, fmt.Errorf("download %s: %w", from, r.scrub(err))
	}
	if n != info.Size {
		return "", from, fmt.Errorf("download %s: %d of %d bytes", from, n, info.Size)
	}
	if want := info.Metadata.Get("X-Amz-Meta-" + shaMeta); want != "" && !strings.EqualFold(want, hex.EncodeToString(h.Sum(nil))) {
		return "", from, fmt.Errorf("download %s: its SHA-256 is not the one recorded at upload", from)
	}
	if err := f.Sync(); err != nil {
		return "", from, fmt.Errorf("download %s: %w", from, err)
	}
	if err := f.Close(); err != nil {
		return "", from, fmt.Errorf("download %s: %w", from, err)
	}
	return f.Name(), from, nil
}

// scrub returns err with the access key pair blanked out of its text, should a server or a
// library ever echo them; the chain is kept when there is nothing to blank.
func (r *Remote) scrub(err error) error {
	msg := err.Error()
	out := msg
	for _, s := range []string{r.creds.SecretAccessKey, r.creds.AccessKeyID} {
		if s != "" {
			out = strings.ReplaceAll(out, s, "[redacted]")
		}
	}
	if out == msg {
		return err
	}
	return errors.New(out)
}

// stampOf returns the time in a copy's name, ownsona-20261122T030000Z.db, and whether name is
// one.
func stampOf(name string) (string, bool) {
	stamp, ok := strings.CutPrefix(name, filePrefix)
	stamp, ok2 := strings.CutSuffix(stamp, ".db")
	if !ok || !ok2 || len(stamp) != len(stampLayout) || path.Base(name) != name {
		return "", false
	}
	for i, c := range stamp {
		if l := stampLayout[i]; (l == 'T' || l == 'Z') && byte(c) != l || l != 'T' && l != 'Z' && (c < '0' || c > '9') {
			return "", false
		}
	}
	return stamp, true
}
