// Package deploy tests the files under deploy/ against the Sluice of this
// tree: the Kubernetes manifests decode into the API's types and are wired
// to each other and to the edge's configuration, and the dashboard and
// alerts name metrics an edge exports. It is a module of its own, so that
// the Kubernetes and kustomize libraries stay out of the server's.
package deploy

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// kubeDir holds the manifests and their kustomization.
const kubeDir = "kubernetes"

// cluster is what `kubectl apply -k deploy/kubernetes` creates, decoded.
type cluster struct {
	kustomization types.Kustomization
	sts           *appsv1.StatefulSet
	services      map[string]*corev1.Service
	pdb           *policyv1.PodDisruptionBudget
	configMaps    map[string]*corev1.ConfigMap
	secrets       map[string]*corev1.Secret
	token         string // the cluster-token the operator made
}

// operatorFiles are the files the docs tell the operator to make beside
// the manifests before applying them: the cluster's token and the public
// key of the app's tokens.
func operatorFiles(t *testing.T) map[string][]byte {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{
		"cluster-token": []byte(rand.Text() + "\n"), // as `openssl rand -base64 32 > cluster-token` writes it
		"jwt.pub.pem":   pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}),
	}
}

// buildCluster runs kustomize, as kubectl apply -k does, over a copy of
// deploy/kubernetes with the operator's files added, and decodes every
// resource it outputs strictly into its Kubernetes type.
func buildCluster(t *testing.T) *cluster {
	t.Helper()
	fsys := filesys.MakeFsInMemory()
	const root = "/app"
	entries, err := os.ReadDir(kubeDir)
	if err != nil {
		t.Fatal(err)
	}
	extra := operatorFiles(t)
	for _, e := range entries {
		if _, theirs := extra[e.Name()]; theirs || e.IsDir() {
			continue // left by an operator trying it here
		}
		data, err := os.ReadFile(filepath.Join(kubeDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		extra[e.Name()] = data
	}
	for name, data := range extra {
		if err := fsys.WriteFile(filepath.Join(root, name), data); err != nil {
			t.Fatal(err)
		}
	}
	c := &cluster{
		services: map[string]*corev1.Service{}, configMaps: map[string]*corev1.ConfigMap{},
		secrets: map[string]*corev1.Secret{}, token: strings.TrimSpace(string(extra["cluster-token"])),
	}
	decodeStrict(t, "kustomization.yaml", yamlToJSON(t, "kustomization.yaml", extra["kustomization.yaml"]), &c.kustomization)
	out, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fsys, root)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", kubeDir, err)
	}
	for _, r := range out.Resources() {
		data, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		c.add(t, "the kustomize output", data)
	}
	if c.sts == nil || c.pdb == nil {
		t.Fatalf("kustomize build %s: no StatefulSet or PodDisruptionBudget", kubeDir)
	}
	return c
}

// add decodes one resource into its type and files it.
func (c *cluster) add(t *testing.T, where string, data []byte) {
	t.Helper()
	obj := decodeResource(t, where, data)
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		if c.sts != nil {
			t.Fatalf("%s: two StatefulSets", where)
		}
		c.sts = o
	case *corev1.Service:
		c.services[o.Name] = o
	case *policyv1.PodDisruptionBudget:
		c.pdb = o
	case *corev1.ConfigMap:
		c.configMaps[o.Name] = o
	case *corev1.Secret:
		c.secrets[o.Name] = o
	}
}

// decodeResource decodes a resource, in JSON, strictly into the type its
// apiVersion and kind name; a kind the manifests are not expected to
// hold fails the test.
func decodeResource(t *testing.T, where string, data []byte) any {
	t.Helper()
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	var obj any
	switch head.APIVersion + " " + head.Kind {
	case "apps/v1 StatefulSet":
		obj = &appsv1.StatefulSet{}
	case "v1 Service":
		obj = &corev1.Service{}
	case "policy/v1 PodDisruptionBudget":
		obj = &policyv1.PodDisruptionBudget{}
	case "v1 ConfigMap":
		obj = &corev1.ConfigMap{}
	case "v1 Secret":
		obj = &corev1.Secret{}
	default:
		t.Fatalf("%s: unexpected resource %s %s", where, head.APIVersion, head.Kind)
	}
	decodeStrict(t, where+": "+head.Kind, data, obj)
	return obj
}

// decodeStrict decodes JSON into v, failing on a field v's type does not
// have: what `kubectl apply --validate=strict` refuses.
func decodeStrict(t *testing.T, where string, data []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	if dec.More() {
		t.Fatalf("%s: more than one value", where)
	}
}

// yamlToJSON converts one YAML document, refusing duplicate keys.
func yamlToJSON(t *testing.T, where string, doc []byte) []byte {
	t.Helper()
	data, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	return data
}

// yamlDocs splits a file into its YAML documents.
func yamlDocs(data []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	flush := func() {
		if strings.TrimSpace(stripComments(cur.String())) != "" {
			docs = append(docs, bytes.Clone(cur.Bytes()))
		}
		cur.Reset()
	}
	for line := range strings.Lines(string(data)) {
		if strings.TrimRight(line, "\n") == "---" {
			flush()
			continue
		}
		cur.WriteString(line)
	}
	flush()
	return docs
}

// stripComments drops the comment lines of a YAML document.
func stripComments(doc string) string {
	var b strings.Builder
	for line := range strings.Lines(doc) {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// TestKubernetesManifestsDecode decodes each file the kustomization
// lists, as written, strictly into the Kubernetes types, and the
// kustomization itself into kustomize's; then builds them (see
// buildCluster), which decodes the output too.
func TestKubernetesManifestsDecode(t *testing.T) {
	t.Parallel()
	c := buildCluster(t)
	raw := &cluster{services: map[string]*corev1.Service{}, configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{}}
	n := 0
	for _, file := range c.kustomization.Resources {
		data, err := os.ReadFile(filepath.Join(kubeDir, file))
		if err != nil {
			t.Fatalf("kustomization.yaml lists %s: %v", file, err)
		}
		for i, doc := range yamlDocs(data) {
			where := fmt.Sprintf("%s, document %d", file, i+1)
			raw.add(t, where, yamlToJSON(t, where, doc))
			n++
		}
	}
	if raw.sts == nil || raw.pdb == nil || len(raw.services) != 2 || n != 4 {
		t.Fatalf("the manifests hold %d resources: StatefulSet %v, PodDisruptionBudget %v, Services %d; want those and two Services",
			n, raw.sts != nil, raw.pdb != nil, len(raw.services))
	}
	// Every file of the directory is a resource, a generator's input or
	// one of the operator's: none is forgotten by the kustomization.
	listed := map[string]bool{"kustomization.yaml": true, ".gitignore": true, "cluster-token": true, "jwt.pub.pem": true}
	for _, f := range c.kustomization.Resources {
		listed[f] = true
	}
	for _, g := range c.kustomization.ConfigMapGenerator {
		for _, f := range g.FileSources {
			if _, file, ok := strings.Cut(f, "="); ok {
				f = file
			}
			listed[f] = true
		}
	}
	entries, err := os.ReadDir(kubeDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !listed[e.Name()] {
			t.Errorf("%s/%s: not used by kustomization.yaml", kubeDir, e.Name())
		}
	}
}
