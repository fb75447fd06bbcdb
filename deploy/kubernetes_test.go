package deploy

import (
	"fmt"
	"net"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd"
)

// The names the manifests give the edge's config and the node's name.
const (
	configKey  = "edge.yaml"
	tokenKey   = "token"
	podNameEnv = "POD_NAME"
)

// edge is the StatefulSet's edge container, and what it is wired to.
type edge struct {
	c      *cluster
	ctr    corev1.Container
	ports  map[string]int32 // the container's ports by name
	mounts map[string]corev1.VolumeMount
	cfg    *edgecmd.Config // the ConfigMap's edge.yaml, loaded
}

// edgeOf returns the StatefulSet's one container, with its config
// loaded from the ConfigMap mounted where --config names it.
func edgeOf(t *testing.T, c *cluster) *edge {
	t.Helper()
	pod := c.sts.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("the StatefulSet runs %d containers, want the edge alone", len(pod.Containers))
	}
	e := &edge{c: c, ctr: pod.Containers[0], ports: map[string]int32{}, mounts: map[string]corev1.VolumeMount{}}
	for _, p := range e.ctr.Ports {
		e.ports[p.Name] = p.ContainerPort
	}
	for _, m := range e.ctr.VolumeMounts {
		e.mounts[m.Name] = m
	}
	args := e.ctr.Args
	if len(args) == 0 || args[0] != "edge" {
		t.Fatalf("the container runs %q, want sluice edge ...", args)
	}
	configPath := flagValue(t, args, "--config")
	cm := e.configMap(t, filepath.Dir(configPath))
	dir := t.TempDir()
	for name, data := range cm.Data {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := edgecmd.ReadConfig(filepath.Join(dir, filepath.Base(configPath)))
	if err != nil {
		t.Fatalf("the ConfigMap's %s: %v", configKey, err)
	}
	e.cfg = cfg
	return e
}

// flagValue returns the value after flag in args.
func flagValue(t *testing.T, args []string, flag string) string {
	t.Helper()
	i := slices.Index(args, flag)
	if i < 0 || i+1 == len(args) {
		t.Fatalf("the container's args %q have no %s", args, flag)
	}
	return args[i+1]
}

// volume returns the pod's volume mounted at dir.
func (e *edge) volume(t *testing.T, dir string) corev1.Volume {
	t.Helper()
	for _, m := range e.ctr.VolumeMounts {
		if m.MountPath != dir {
			continue
		}
		for _, v := range e.c.sts.Spec.Template.Spec.Volumes {
			if v.Name == m.Name {
				return v
			}
		}
		t.Fatalf("no volume %s for the mount at %s", m.Name, dir)
	}
	t.Fatalf("nothing is mounted at %s", dir)
	return corev1.Volume{}
}

// configMap returns the ConfigMap mounted at dir.
func (e *edge) configMap(t *testing.T, dir string) *corev1.ConfigMap {
	t.Helper()
	v := e.volume(t, dir)
	if v.ConfigMap == nil || e.c.configMaps[v.ConfigMap.Name] == nil {
		t.Fatalf("the volume at %s is no ConfigMap of the kustomization: %+v", dir, v.VolumeSource)
	}
	return e.c.configMaps[v.ConfigMap.Name]
}

// port returns the port number of a host:port address.
func port(t *testing.T, what, addr string) int32 {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("%s %q: %v", what, addr, err)
	}
	n, err := strconv.ParseInt(p, 10, 32)
	if err != nil {
		t.Fatalf("%s %q: %v", what, addr, err)
	}
	return int32(n)
}

// TestKubernetesConfig loads the ConfigMap's edge configuration with the
// edge's own loader, with the token from the Secret mounted where the
// config reads it, and validates it as the edge does at its start.
func TestKubernetesConfig(t *testing.T) {
	t.Parallel()
	e := edgeOf(t, buildCluster(t))
	cfg := e.cfg
	tokenDir := path.Dir(cfg.Cluster.TokenFile)
	v := e.volume(t, tokenDir)
	if v.Secret == nil || e.c.secrets[v.Secret.SecretName] == nil {
		t.Fatalf("cluster.token_file %s: the volume at %s is no Secret of the kustomization", cfg.Cluster.TokenFile, tokenDir)
	}
	secret := e.c.secrets[v.Secret.SecretName]
	if path.Base(cfg.Cluster.TokenFile) != tokenKey || strings.TrimSpace(string(secret.Data[tokenKey])) != e.c.token {
		t.Fatalf("cluster.token_file %s: the Secret %s holds %q, want the cluster-token file under the key %q",
			cfg.Cluster.TokenFile, secret.Name, secret.Data, tokenKey)
	}
	// The edge runs as a user of the pod's fsGroup, not the files' owner.
	if m := v.Secret.DefaultMode; m == nil || *m&0o040 == 0 {
		t.Fatalf("the Secret's files have mode %v: the edge, of the pod's fsGroup, cannot read them", m)
	}
	// Where the pod has it, the test's copy.
	cfg.Cluster.TokenFile = filepath.Join(t.TempDir(), tokenKey)
	if err := os.WriteFile(cfg.Cluster.TokenFile, secret.Data[tokenKey], 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.Cluster.NodeName = e.c.sts.Name + "-0" // --node-name $(POD_NAME)
	if err := cfg.Validate(); err != nil {
		t.Fatalf("the ConfigMap's %s: %v", configKey, err)
	}
	if ws := cfg.Warnings(); len(ws) != 0 {
		t.Fatalf("the ConfigMap's %s warns: %q", configKey, ws)
	}
	gen := e.c.kustomization.SecretGenerator
	if len(gen) != 1 || !strings.HasPrefix(secret.Name, gen[0].Name+"-") || !slices.Equal(gen[0].FileSources, []string{tokenKey + "=cluster-token"}) {
		t.Fatalf("kustomization.yaml's secretGenerator %+v: want %s from the cluster-token file the docs make", gen, secret.Name)
	}
}

// TestKubernetesCluster checks the cluster's shape: three pods with
// stable names, started together, any one of which may be down, and
// routes that name each pod through the headless Service.
func TestKubernetesCluster(t *testing.T) {
	t.Parallel()
	c := buildCluster(t)
	e := edgeOf(t, c)
	sts, spec := c.sts, c.sts.Spec
	replicas := int(*spec.Replicas)
	if replicas != 3 || spec.PodManagementPolicy != "Parallel" {
		// A node is ready only with a quorum: one pod at a time, the
		// first would wait for a second that waits for it to be ready.
		t.Fatalf("replicas %d, pod management %q: want 3 started in parallel", replicas, spec.PodManagementPolicy)
	}
	headless := c.services[spec.ServiceName]
	if headless == nil || headless.Spec.ClusterIP != corev1.ClusterIPNone || !headless.Spec.PublishNotReadyAddresses {
		// The pods dial each other before any is ready.
		t.Fatalf("serviceName %q: want a headless Service (clusterIP None) that publishes not-ready pods", spec.ServiceName)
	}
	cl := e.cfg.Cluster
	if cl.Name == "" || cl.DataDir == "" {
		t.Fatalf("cluster: name %q, data_dir %q", cl.Name, cl.DataDir)
	}
	routePort := port(t, "cluster.listen", cl.Listen)
	var want []string
	for i := range replicas {
		want = append(want, fmt.Sprintf("nats-route://%s-%d.%s:%d", sts.Name, i, headless.Name, routePort))
	}
	if !slices.Equal(cl.Routes, want) {
		t.Fatalf("cluster.routes %q, want the pods by their DNS names %q", cl.Routes, want)
	}
	// The node's name is the pod's: unique, stable across restarts.
	if flagValue(t, e.ctr.Args, "--node-name") != "$("+podNameEnv+")" {
		t.Fatalf("--node-name %q, want $(%s)", flagValue(t, e.ctr.Args, "--node-name"), podNameEnv)
	}
	i := slices.IndexFunc(e.ctr.Env, func(v corev1.EnvVar) bool { return v.Name == podNameEnv })
	if i < 0 || e.ctr.Env[i].ValueFrom == nil || e.ctr.Env[i].ValueFrom.FieldRef == nil || e.ctr.Env[i].ValueFrom.FieldRef.FieldPath != "metadata.name" {
		t.Fatalf("env %s is not the pod's name: %+v", podNameEnv, e.ctr.Env)
	}
	// One down at a time leaves a quorum.
	pdb := c.pdb.Spec
	if pdb.MaxUnavailable == nil || pdb.MaxUnavailable.IntValue() != 1 || pdb.MinAvailable != nil {
		t.Fatalf("PodDisruptionBudget: maxUnavailable %v, minAvailable %v: want maxUnavailable 1", pdb.MaxUnavailable, pdb.MinAvailable)
	}
	podLabels := labels.Set(spec.Template.Labels)
	for what, sel := range map[string]map[string]string{
		"StatefulSet": spec.Selector.MatchLabels, "PodDisruptionBudget": pdb.Selector.MatchLabels,
	} {
		if len(sel) == 0 || !labels.SelectorFromSet(sel).Matches(podLabels) {
			t.Errorf("%s selects %v, not the pods (%v)", what, sel, podLabels)
		}
	}
	for _, svc := range c.services {
		if len(svc.Spec.Selector) == 0 || !labels.SelectorFromSet(svc.Spec.Selector).Matches(podLabels) {
			t.Errorf("Service %s selects %v, not the pods (%v)", svc.Name, svc.Spec.Selector, podLabels)
		}
	}
}

// TestKubernetesPorts checks that the container's ports are the edge's
// listeners, that the Services and probes use them, and that the
// probes ask the endpoints the docs give.
func TestKubernetesPorts(t *testing.T) {
	t.Parallel()
	c := buildCluster(t)
	e := edgeOf(t, c)
	want := map[string]int32{
		"http":    port(t, "listen", e.cfg.ListenAddr()),
		"admin":   port(t, "admin.listen", e.cfg.Admin.Listen),
		"cluster": port(t, "cluster.listen", e.cfg.Cluster.Listen),
	}
	if len(e.ports) != len(want) {
		t.Fatalf("container ports %v, want %v", e.ports, want)
	}
	for name, p := range want {
		if e.ports[name] != p {
			t.Errorf("container port %s is %d, the edge listens on %d", name, e.ports[name], p)
		}
	}
	headless := c.services[c.sts.Spec.ServiceName]
	exposed := map[string][]string{
		headless.Name: {"cluster", "admin"}, // the routes; Prometheus, ready or not
		"sluice":      {"http"},             // clients: never the admin or route ports
	}
	for name, ports := range exposed {
		svc := c.services[name]
		if svc == nil {
			t.Fatalf("no Service %s", name)
		}
		var got []string
		for _, sp := range svc.Spec.Ports {
			p := e.target(t, "Service "+name, sp.TargetPort)
			if e.ports[sp.Name] != p {
				t.Errorf("Service %s: port %s goes to %d, the container's %s is %d", name, sp.Name, p, sp.Name, e.ports[sp.Name])
			}
			got = append(got, sp.Name)
		}
		if !slices.Equal(got, ports) {
			t.Errorf("Service %s exposes %q, want %q", name, got, ports)
		}
	}
	e.checkProbes(t, want["http"], want["admin"])
	ann := c.sts.Spec.Template.Annotations
	if ann["prometheus.io/port"] != strconv.Itoa(int(want["admin"])) || ann["prometheus.io/path"] != "/metrics" {
		t.Errorf("the pods' scrape annotations %v, want /metrics on the admin port %d", ann, want["admin"])
	}
}

// target returns the container's port a Service or probe names.
func (e *edge) target(t *testing.T, what string, p intstr.IntOrString) int32 {
	t.Helper()
	if p.Type == intstr.String {
		if n, ok := e.ports[p.StrVal]; ok {
			return n
		}
		t.Fatalf("%s: no container port named %q", what, p.StrVal)
	}
	return p.IntVal
}

// checkProbes checks that the probes ask /readyz (readiness) and
// /healthz (liveness, startup) on one of the edge's listeners.
func (e *edge) checkProbes(t *testing.T, mainPort, adminPort int32) {
	t.Helper()
	for what, pr := range map[string]*corev1.Probe{
		"readiness": e.ctr.ReadinessProbe, "liveness": e.ctr.LivenessProbe, "startup": e.ctr.StartupProbe,
	} {
		if pr == nil || pr.HTTPGet == nil {
			t.Fatalf("no HTTP %s probe", what)
		}
		wantPath := map[string]string{"readiness": "/readyz", "liveness": "/healthz", "startup": "/healthz"}[what]
		// Both listeners serve /healthz and /readyz (docs/deployment.md).
		if p := e.target(t, what+" probe", pr.HTTPGet.Port); pr.HTTPGet.Path != wantPath || (p != mainPort && p != adminPort) {
			t.Errorf("%s probe asks %s on %d, want %s on the edge's listener or its admin's", what, pr.HTTPGet.Path, p, wantPath)
		}
	}
}

// TestKubernetesVolumes checks the mounts: each of a volume or a claim,
// none inside another, the data directory on the pod's claim and the
// config where --config reads it.
func TestKubernetesVolumes(t *testing.T) {
	t.Parallel()
	c := buildCluster(t)
	e := edgeOf(t, c)
	spec := c.sts.Spec
	sources := map[string]bool{}
	for _, v := range spec.Template.Spec.Volumes {
		sources[v.Name] = true
	}
	claims := map[string]bool{}
	for _, pvc := range spec.VolumeClaimTemplates {
		claims[pvc.Name] = true
		if _, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; !ok || !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteOnce) {
			t.Errorf("claim %s: %+v, want ReadWriteOnce with a storage request", pvc.Name, pvc.Spec)
		}
	}
	for name := range e.mounts {
		if sources[name] == claims[name] {
			t.Errorf("mount %s: volume %v, claim %v: want exactly one", name, sources[name], claims[name])
		}
	}
	for name := range sources {
		if _, ok := e.mounts[name]; !ok {
			t.Errorf("volume %s is mounted nowhere", name)
		}
	}
	for _, a := range e.mounts {
		for _, b := range e.mounts {
			if a.Name != b.Name && strings.HasPrefix(a.MountPath, strings.TrimSuffix(b.MountPath, "/")+"/") {
				t.Errorf("%s is mounted inside %s, a read-only volume", a.MountPath, b.MountPath)
			}
		}
	}
	data := e.cfg.Cluster.DataDir
	m, ok := e.mounts[spec.VolumeClaimTemplates[0].Name]
	if len(claims) != 1 || !ok || (data != m.MountPath && !strings.HasPrefix(data, m.MountPath+"/")) || m.ReadOnly {
		t.Errorf("cluster.data_dir %s is not on the pod's claim (%+v)", data, m)
	}
	cm := e.configMap(t, path.Dir(flagValue(t, e.ctr.Args, "--config")))
	if _, ok := cm.Data[path.Base(flagValue(t, e.ctr.Args, "--config"))]; !ok {
		t.Errorf("--config %s: the ConfigMap %s holds %v", flagValue(t, e.ctr.Args, "--config"), cm.Name, keys(cm.Data))
	}
	for _, a := range e.cfg.Apps {
		if a.JWTKeyFile != "" {
			if _, ok := cm.Data[a.JWTKeyFile]; !ok {
				t.Errorf("app %s: jwt_key_file %s is not in the ConfigMap beside the config", a.Appkey, a.JWTKeyFile)
			}
		}
	}
}

// ptrOr returns *p, or def when p is nil.
func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// keys returns m's keys, sorted.
func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestKubernetesLifecycle checks the pod's time to drain, the store's
// room in the container's memory, and the image kustomize names.
func TestKubernetesLifecycle(t *testing.T) {
	t.Parallel()
	c := buildCluster(t)
	e := edgeOf(t, c)
	l := e.cfg.Limits
	// The defaults live in edgecmd; the manifests say theirs.
	if l.DrainDelay == nil || l.ShutdownTimeout == 0 {
		t.Fatalf("limits.drain_delay %v, shutdown_timeout %v: set both, the grace period is reckoned from them", l.DrainDelay, l.ShutdownTimeout)
	}
	drain := time.Duration(*l.DrainDelay) + time.Duration(l.ShutdownTimeout)
	grace := ptrOr(c.sts.Spec.Template.Spec.TerminationGracePeriodSeconds, 30) // Kubernetes' default
	if time.Duration(grace)*time.Second <= drain {
		t.Fatalf("terminationGracePeriodSeconds %d is not longer than the drain, drain_delay + shutdown_timeout = %v", grace, drain)
	}
	mem, ok := e.ctr.Resources.Limits[corev1.ResourceMemory]
	if !ok || int64(l.StoreBytes) == 0 || int64(l.StoreBytes) >= mem.Value()/2 {
		t.Fatalf("limits.store_bytes %v in a container of %v: want it set, under half the memory", l.StoreBytes, mem.String())
	}
	img := c.kustomization.Images
	if len(img) != 1 || img[0].Name != "sluice" || e.ctr.Image != img[0].NewName+":"+img[0].NewTag {
		t.Fatalf("the container runs %q; kustomization.yaml's images: %+v", e.ctr.Image, img)
	}
}
