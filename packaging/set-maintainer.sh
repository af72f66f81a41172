#!/bin/sh
# Puts the builder's name and address into a copy of debian/ (make deb runs it on build-deb/):
# terrane names no maintainer of its own, and Debian Policy 5.6.2 wants a real one.
# usage: DEBFULLNAME='Jane Doe' DEBEMAIL=jane@example.org set-maintainer.sh TREE
# TREE holds debian/control and debian/changelog with @DEBFULLNAME@ and @DEBEMAIL@ in them.
set -eu
tree=$1
name=${DEBFULLNAME-}
mail=${DEBEMAIL-}
# dch also takes DEBEMAIL="Name <address>" without DEBFULLNAME.
case $mail in
*"<"*">"*)
    [ -n "$name" ] || name=$(printf '%s' "$mail" | sed 's/ *<.*//')
    mail=$(printf '%s' "$mail" | sed 's/.*<\(.*\)>.*/\1/')
    ;;
esac
if [ -z "$name" ] || [ -z "$mail" ]; then
    echo "make deb: set DEBFULLNAME and DEBEMAIL to the name and e-mail address of whoever builds" \
        "the packages and answers for them (the Maintainer field; Debian Policy 5.6.2 wants a real" \
        "address, and terrane's tree names none), e.g. DEBFULLNAME='Jane Doe'" \
        "DEBEMAIL=jane@example.org make deb" >&2
    exit 1
fi
if ! printf '%s' "$mail" | grep -Eq '^[A-Za-z0-9._+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$'; then
    echo "make deb: DEBEMAIL '$mail' is not an e-mail address (expected name@host.domain)" >&2
    exit 1
fi
if printf '%s' "$name" | grep -q '[<>|&\\,]'; then
    echo "make deb: DEBFULLNAME '$name' holds one of < > | & \\ , which a Maintainer field" \
        "cannot hold" >&2
    exit 1
fi
for f in "$tree/debian/control" "$tree/debian/changelog"; do
    grep -q '@DEBFULLNAME@ <@DEBEMAIL@>' "$f" || {
        echo "make deb: $f has no '@DEBFULLNAME@ <@DEBEMAIL@>' to fill in" >&2
        exit 1
    }
    sed "s|@DEBFULLNAME@ <@DEBEMAIL@>|$name <$mail>|g" "$f" >"$f.new"
    mv "$f.new" "$f"
done
echo "Maintainer: $name <$mail>"
