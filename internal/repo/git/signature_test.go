package git

import "testing"

func TestSplitSignature(t *testing.T) {
	signed := "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor a <a@example.com> 1 +0000\ncommitter a <a@example.com> 1 +0000\n" +
		"gpgsig -----BEGIN PGP SIGNATURE-----\n \n wsBcBAABCAAQBQJ\n -----END PGP SIGNATURE-----\n\nthe message\n\nwith a body\n"
	got := splitSignature([]byte(signed))
	wantPayload := "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor a <a@example.com> 1 +0000\ncommitter a <a@example.com> 1 +0000\n\nthe message\n\nwith a body\n"
	if string(got.Payload) != wantPayload {
		t.Errorf("payload:\n%q\nwant\n%q", got.Payload, wantPayload)
	}
	if want := "-----BEGIN PGP SIGNATURE-----\n\nwsBcBAABCAAQBQJ\n-----END PGP SIGNATURE-----\n"; got.Signature != want {
		t.Errorf("signature:\n%q\nwant\n%q", got.Signature, want)
	}
	unsigned := splitSignature([]byte(wantPayload))
	if unsigned.Signature != "" || string(unsigned.Payload) != wantPayload {
		t.Errorf("unsigned: %+v", unsigned)
	}
}
