package updater

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/imageupdater/config"
	"github.com/capstan-cd/capstan/internal/testing/localcluster"
)

// TestSignedWriteBack: with git.commit-signing-key, git.commit-signing-method
// and git.commit-sign-off in the ConfigMap, a Git write-back's commit is
// signed with the SSH key and signed off by the updater.
func TestSignedWriteBack(t *testing.T) {
	localcluster.Need(t)
	r := newBareRig(t, "", "", nil)
	key := filepath.Join(t.TempDir(), "signing")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
	r.configure(func(data map[string]string) {
		data["git.commit-signing-key"], data["git.commit-signing-method"], data["git.commit-sign-off"] = key, "ssh", "true"
	})
	r.dockerConfigSecret("pull", r.reg.Password)
	image := r.image("team/signed")
	r.reg.PushImage(t, "team/signed", t0, "1.0.0", "1.1.0")
	r.repo.Commit(t, "app", map[string]string{"signed/deployment.yaml": deploymentYAML("signed", image+":1.0.0")})
	r.create(&v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "signed", Namespace: r.ns, Annotations: map[string]string{
			p + "image-list": image, p + "pull-secret": "pullsecret:" + r.ns + "/pull", p + "force-update": "true", p + "write-back-method": "git",
		}},
		Spec: v1alpha1.ApplicationSpec{Project: "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: r.repo.URL, Path: "signed", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "signed"}},
	})
	if res := r.runOnce(); res.Updated != 1 || res.Errors != 0 {
		t.Fatalf("cycle %+v, want the signed update pushed", res)
	}
	sha := r.repo.Head(t, "main")
	obj := r.repo.CommitObject(t, sha)
	if !strings.Contains(obj, "-----BEGIN SSH SIGNATURE-----") || !strings.Contains(obj, "Signed-off-by: "+config.DefaultGitUser+" <"+config.DefaultGitEmail+">") {
		t.Fatalf("the write-back commit is not signed and signed off:\n%s", obj)
	}
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	signers := filepath.Join(t.TempDir(), "allowed_signers")
	if err := os.WriteFile(signers, []byte(config.DefaultGitEmail+" "+string(pub)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.repo.VerifyCommit(sha, "gpg.ssh.allowedSignersFile="+signers); err != nil {
		t.Errorf("the signature does not verify: %v", err)
	}
}
