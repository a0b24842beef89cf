package settings

import (
	"cmp"
	"strings"
)

// PublicSettings are the argocd-cm settings anyone may read, in the shape
// of Argo CD's settings API (GET /api/v1/settings), which its UI and CLI
// read: status badges, the UI's banner and stylesheet, analytics, help
// links, the password rule and what the installation allows.
type PublicSettings struct {
	AppLabelKey          string           `json:"appLabelKey"`
	TrackingMethod       string           `json:"trackingMethod"`
	StatusBadgeEnabled   bool             `json:"statusBadgeEnabled"`
	StatusBadgeRootURL   string           `json:"statusBadgeRootUrl,omitempty"`
	GoogleAnalytics      *GoogleAnalytics `json:"googleAnalytics,omitempty"`
	Help                 *Help            `json:"help,omitempty"`
	UserLoginsDisabled   bool             `json:"userLoginsDisabled"`
	UICSSURL             string           `json:"uiCssURL,omitempty"`
	UIBannerContent      string           `json:"uiBannerContent,omitempty"`
	UIBannerURL          string           `json:"uiBannerURL,omitempty"`
	UIBannerPermanent    bool             `json:"uiBannerPermanent"`
	UIBannerPosition     string           `json:"uiBannerPosition,omitempty"`
	PasswordPattern      string           `json:"passwordPattern"`
	ExecEnabled          bool             `json:"execEnabled"`
	ImpersonationEnabled bool             `json:"impersonationEnabled"`
	InstallationID       string           `json:"installationID,omitempty"`
}

// GoogleAnalytics are the ga.* settings, passed to the UI.
type GoogleAnalytics struct {
	TrackingID     string `json:"trackingID"`
	AnonymizeUsers bool   `json:"anonymizeUsers"`
}

// Help are the help.* settings: a chat link and CLI download links.
type Help struct {
	ChatURL    string            `json:"chatUrl,omitempty"`
	ChatText   string            `json:"chatText,omitempty"`
	BinaryURLs map[string]string `json:"binaryUrls,omitempty"`
}

// DefaultAppLabelKey is application.instanceLabelKey's default.
const DefaultAppLabelKey = "app.kubernetes.io/instance"

// Public reads the public settings, with Argo CD's defaults. Logins are
// disabled when admin is and no other local account may log in.
func (a *ArgoCD) Public(otherLogins bool) PublicSettings {
	d := a.Data
	p := PublicSettings{
		AppLabelKey: cmp.Or(a.InstanceLabelKey(), DefaultAppLabelKey), TrackingMethod: cmp.Or(d["application.resourceTrackingMethod"], "annotation"),
		StatusBadgeEnabled: a.StatusBadgeEnabled(), StatusBadgeRootURL: d["statusbadge.url"],
		UserLoginsDisabled: d["admin.enabled"] == "false" && !otherLogins,
		UICSSURL:           d["ui.cssurl"], UIBannerContent: d["ui.bannercontent"], UIBannerURL: d["ui.bannerurl"],
		UIBannerPermanent: d["ui.bannerpermanent"] == "true", UIBannerPosition: d["ui.bannerposition"],
		PasswordPattern: cmp.Or(d[PasswordPatternKey], DefaultPasswordPattern), ExecEnabled: (&ArgoCD{Data: d}).ExecEnabled(),
		ImpersonationEnabled: a.SyncImpersonationEnabled(),
		InstallationID:       a.InstallationID(),
	}
	if id := d["ga.trackingid"]; id != "" {
		p.GoogleAnalytics = &GoogleAnalytics{TrackingID: id, AnonymizeUsers: d["ga.anonymizeusers"] != "false"}
	}
	help := &Help{ChatURL: d["help.chatUrl"], ChatText: d["help.chatText"]}
	for k, v := range d {
		if platform, ok := strings.CutPrefix(k, "help.download."); ok && v != "" {
			if help.BinaryURLs == nil {
				help.BinaryURLs = map[string]string{}
			}
			help.BinaryURLs[platform] = v
		}
	}
	if help.ChatURL != "" || help.ChatText != "" || help.BinaryURLs != nil {
		p.Help = help
	}
	return p
}
