#!/bin/sh
# Fails when the generated files (deepcopy code and CRDs under api/ and
# manifests/, the install files, the Helm chart's copy) are not what their
# sources generate. It regenerates into a copy of the working tree, so it
# judges the files as they are, committed or not, and never touches them.
set -eu
dirs="api manifests charts"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar --exclude=./bin --exclude=./.local --exclude=./.git --exclude=node_modules -cf - . | tar -C "$tmp" -xf -
make -C "$tmp" --no-print-directory generate >"$tmp/generate.log" 2>&1 || { cat "$tmp/generate.log"; exit 1; }
stale=0
for d in $dirs; do
	diff -ru --exclude=generate.log "$d" "$tmp/$d" || stale=1
done
if [ "$stale" -ne 0 ]; then
	echo "generated files are stale: run 'make generate' (the differences are above)"
	exit 1
fi
