package webhook

import "testing"

// FuzzParse reads registry push notifications, which anyone who can reach
// the webhook sends.
func FuzzParse(f *testing.F) {
	f.Add("docker.io", `{"push_data":{"tag":"1.2.3"},"repository":{"repo_name":"team/app"}}`)
	f.Add("ghcr.io", `{"action":"published","registry_package":{"name":"app","namespace":"org","package_version":{"container_metadata":{"tag":{"name":"v1"}}}}}`)
	f.Add("harbor", `{"type":"PUSH_ARTIFACT","event_data":{"resources":[{"tag":"1"}],"repository":{"repo_full_name":"p/app"}}}`)
	f.Add("quay.io", `{"repository":"org/app","docker_url":"quay.io/org/app","updated_tags":["1"]}`)
	f.Add("distribution", `{"events":[{"action":"push","target":{"repository":"app","tag":"1"},"request":{"host":"r:5000"}}]}`)
	f.Add("acr", `{"action":"push","target":{"repository":"app","tag":"1"},"request":{"host":"r.azurecr.io"}}`)
	f.Add("aliyun-acr", `{"push_data":{"tag":"1"},"repository":{"repo_full_name":"ns/app","region":"cn-hangzhou"}}`)
	f.Add("cloudevents", `{"specversion":"1.0","type":"com.amazon.ecr.image.push","source":"arn:aws:ecr:us-east-1:1:repository/app","data":{"repositoryName":"app","imageTag":"1"}}`)
	f.Add("", `{}`)
	f.Add("", `[`)
	f.Fuzz(func(t *testing.T, kind, body string) {
		_, _ = Parse(Kind(kind), []byte(body))
	})
}
