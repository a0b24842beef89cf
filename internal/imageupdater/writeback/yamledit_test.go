package writeback

import (
	"strings"
	"testing"

	"github.com/capstan-cd/capstan/api/v1alpha1"
	"github.com/capstan-cd/capstan/internal/imageupdater/config"
)

func TestSetValuesKeepsCommentsAndLayout(t *testing.T) {
	values := `# values for foo
replicaCount: 2
image:
    # the repository CI pushes to
    repository: "old.example.com/foo"   # keep me
    tag: v1.0.0
    pullPolicy: IfNotPresent
ingress: {enabled: false}
`
	out, err := SetValues([]byte(values), [][2]string{{"image.repository", "123.dkr.ecr.ap-northeast-1.amazonaws.com/foo"}, {"image.tag", "v1.2.0"}})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(strings.Replace(values, `"old.example.com/foo"`, `"123.dkr.ecr.ap-northeast-1.amazonaws.com/foo"`, 1), "tag: v1.0.0", "tag: v1.2.0", 1)
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

func TestSetValuesQuotesTagsYAMLWouldReadAsNumbers(t *testing.T) {
	out, err := SetValues([]byte("image:\n  tag: abc\n"), [][2]string{{"image.tag", "1.10"}})
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "image:\n  tag: \"1.10\"\n" {
		t.Errorf("got %q", out)
	}
}

func TestSetValuesAddsMissingKeys(t *testing.T) {
	out, err := SetValues([]byte("# top\nreplicaCount: 1\n"), [][2]string{{"image.tag", "1.2.0"}})
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "# top\nreplicaCount: 1\nimage:\n  tag: 1.2.0\n" {
		t.Errorf("got %q", out)
	}
	if _, err := SetValues([]byte("image: nginx\n"), [][2]string{{"image.tag", "1"}}); err == nil {
		t.Error("a path through a scalar should fail")
	}
	if _, err := SetValues([]byte("a: [\n"), nil); err == nil {
		t.Error("malformed YAML should fail")
	}
}

func TestSetManifestImages(t *testing.T) {
	manifests := `apiVersion: apps/v1
kind: Deployment
spec:
  template:
    spec:
      containers:
      - name: app
        image: 127.0.0.1:5000/team/app:1.0.0 # pinned by CI
      - name: sidecar
        image: 127.0.0.1:5000/team/sidecar:1.0.0
---
kind: CronJob
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - image: '127.0.0.1:5000/team/app:0.9.0'
`
	c := Change{Name: "127.0.0.1:5000/team/app", OldTag: "1.0.0", NewTag: "1.1.0"}
	out, found, err := SetManifestImages([]byte(manifests), c)
	if err != nil || !found {
		t.Fatalf("found %v err %v", found, err)
	}
	want := strings.Replace(strings.Replace(manifests, "app:1.0.0 #", "app:1.1.0 #", 1), "'127.0.0.1:5000/team/app:0.9.0'", "'127.0.0.1:5000/team/app:1.1.0'", 1)
	if string(out) != want {
		t.Errorf("got\n%s", out)
	}
	if _, found, _ := SetManifestImages([]byte(manifests), Change{Name: "other/app", NewTag: "1"}); found {
		t.Error("an image no manifest uses should not be found")
	}
}

func TestSetKustomizationImage(t *testing.T) {
	k := "resources:\n- deployment.yaml\nimages:\n- name: app # the API\n  newTag: 1.0.0\n"
	c := Change{Name: "app", NewTag: "1.1.0"}
	out, err := SetKustomizationImage([]byte(k), c)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != strings.Replace(k, "newTag: 1.0.0", "newTag: 1.1.0", 1) {
		t.Errorf("in place: %q", out)
	}
	out, err = SetKustomizationImage([]byte("resources:\n- deployment.yaml\n"), Change{Name: "reg.example.com/app", NewTag: "2.0.0", Image: config.Image{KustomizeImageName: "app"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "resources:\n  - deployment.yaml\nimages:\n  - name: app\n    newName: reg.example.com/app\n    newTag: 2.0.0\n"; string(out) != want {
		t.Errorf("added: %q", out)
	}
}

func TestOverrides(t *testing.T) {
	images := SetKustomizeImage(v1alpha1.KustomizeImages{"other:1", "reg:5000/app:1.0.0"}, Change{Name: "reg:5000/app", NewTag: "1.1.0"})
	if len(images) != 2 || images[1] != "reg:5000/app:1.1.0" {
		t.Errorf("kustomize images %v", images)
	}
	params := SetHelmParameters([]v1alpha1.HelmParameter{{Name: "image.tag", Value: "1.0.0"}},
		Change{Name: "reg/app", NewTag: "1.1.0", Image: config.Image{HelmImageName: "image.repository"}})
	want := []v1alpha1.HelmParameter{{Name: "image.tag", Value: "1.1.0", ForceString: true}, {Name: "image.repository", Value: "reg/app", ForceString: true}}
	if len(params) != 2 || params[0] != want[0] || params[1] != want[1] {
		t.Errorf("helm parameters %+v", params)
	}
}

func TestRenderCommitMessages(t *testing.T) {
	changes := []Change{{Name: "reg/app", OldTag: "v1.0.0", NewTag: "v1.1.0"}}
	got, err := Render("イメージのタグを {{ .tag }} に更新しました", "foo-application", changes)
	if err != nil || got != "イメージのタグを v1.1.0 に更新しました" {
		t.Errorf("a Japanese template: %q %v", got, err)
	}
	got, err = Render(DefaultCommitMessage, "foo", changes)
	if err != nil || got != "build: automatic update of foo\n\nupdates image reg/app tag 'v1.0.0' to 'v1.1.0'\n" {
		t.Errorf("default template: %q %v", got, err)
	}
	if _, err := Render("{{ .tag", "foo", changes); err == nil {
		t.Error("a broken template should fail")
	}
}

func TestSetValuesFillsAnEmptyValue(t *testing.T) {
	out, err := SetValues([]byte("image:\n  tag: # set by CI\n  pullPolicy: Always\n"), [][2]string{{"image.tag", "1.2.3"}})
	if err != nil {
		t.Fatal(err)
	}
	if !holdsValues(out, [][2]string{{"image.tag", "1.2.3"}, {"image.pullPolicy", "Always"}}) {
		t.Errorf("got %q", out)
	}
}
