// Package notifications is Capstan's notifications controller: it tells
// people and systems about Applications, configured as Argo CD's
// notifications controller is, from argocd-notifications-cm and
// argocd-notifications-secret.
//
// A trigger is a list of conditions (expr-lang expressions over the
// Application); when one holds, the templates it names are rendered (Go
// templates with Sprig) and sent to the subscribed destinations through a
// service (webhook, e-mail, Slack). Subscriptions come from annotations
// on the Application and its AppProject
// (notifications.argoproj.io/subscribe.<trigger>.<service>) and from the
// ConfigMap's default subscriptions. What was sent is remembered in the
// Application's notified.notifications.argoproj.io annotation, with Argo
// CD's keys, so each event is told once, even across a takeover from Argo
// CD.
//
// Parse turns the settings into a Config; Config.Process decides and sends
// for one Application; Run watches Applications and persists the state.
package notifications
