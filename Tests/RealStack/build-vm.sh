#!/usr/bin/env bash
# Builds the kernel and the small initramfs of the real-stack test VM.
#
#   Tests/RealStack/build-vm.sh CACHE_DIR
#
# The VM runs Debian's own kernel (downloaded once with `apt-get download` and cached in
# CACHE_DIR) with the Bluetooth, virtual-HCI, kernel-crypto and virtio-9p modules. The
# initramfs holds only busybox, those modules and the guest /init: everything else (bluez,
# dbus-daemon, the bitflash binary and its libraries) comes from the host's root file
# system, shared read-only into the guest over virtio-9p.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${1:?usage: build-vm.sh CACHE_DIR}"
kernel_version="$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/.*Depends: linux-image-\([0-9].*-amd64\)$/\1/p' | head -1)"
kernel_version="${kernel_version:-6.1.0-56-amd64}"
mkdir -p "$cache"
extracted="$cache/kernel-$kernel_version"
if [ ! -d "$extracted/lib/modules/$kernel_version" ]; then
    echo "== downloading linux-image-$kernel_version (about 70 MB, once; kept unpacked in $cache, about 410 MB)"
    # As root, apt cannot hand the download to its unprivileged user in a folder of root's.
    sandbox=(); [ "$(id -u)" = 0 ] && sandbox=(-o APT::Sandbox::User=root)
    (cd "$cache" && apt-get download -q "${sandbox[@]}" "linux-image-$kernel_version")
    mkdir -p "$extracted.partial"
    dpkg-deb -x "$cache"/linux-image-"${kernel_version}"_*.deb "$extracted.partial"
    depmod -b "$extracted.partial" "$kernel_version"
    rm -rf "$extracted"
    mv "$extracted.partial" "$extracted"
    rm -f "$cache"/linux-image-"${kernel_version}"_*.deb
fi
cp "$extracted/boot/vmlinuz-$kernel_version" "$cache/vmlinuz"

root="$cache/initramfs"
rm -rf "$root"
mkdir -p "$root"/{bin,dev,proc,sys,run,tmp,host,out,lib/modules}
cp /bin/busybox "$root/bin/busybox"
for applet in sh mount umount insmod sleep cat echo mkdir chroot poweroff ls grep; do
    ln -sf busybox "$root/bin/$applet"
done
# Load order matters: kernel crypto for btvirt (it fails with "Failed to open Virtual HCI
# device" without AF_ALG/cmac/ecb), Bluetooth and the virtual HCI, then virtio-9p.
# The kernel's default random number generator (drbg, with ctr and sha512 for its CTR and
# SHA-512 variants, whose self-tests fail without them) comes before ecdh_generic: the kernel's
# self-test of ecdh-nist-p256 runs when that module loads, and its second vector generates a
# private key from the default generator. With no generator it fails ("alg: ecdh-nist-p256:
# test failed on vector 2, err=-14", crypto/ecc.c ecc_gen_privkey) and the kernel leaves the
# algorithm untested (/proc/crypto: "selftest : unknown"), so unusable; Bluetooth's Security
# Manager needs it for LE Secure Connections. The initramfs
# has no modprobe, so nothing is loaded on demand. drbg seeds itself without jitterentropy_rng
# (it logs "Continuing without Jitter RNG"; this kernel's module does not load here).
modules=(crypto/af_alg crypto/algif_hash crypto/algif_skcipher crypto/ecb crypto/cmac lib/crc16
    crypto/ctr crypto/sha512_generic crypto/drbg crypto/ecc
    crypto/ecdh_generic net/rfkill/rfkill net/bluetooth/bluetooth drivers/bluetooth/hci_vhci
    fs/netfs/netfs fs/fscache/fscache net/9p/9pnet drivers/virtio/virtio_ring drivers/virtio/virtio
    drivers/virtio/virtio_pci_legacy_dev drivers/virtio/virtio_pci_modern_dev drivers/virtio/virtio_pci
    net/9p/9pnet_virtio fs/9p/9p)
: > "$root/lib/modules/order"
for module in "${modules[@]}"; do
    name="$(basename "$module")"
    file="$(find "$extracted/lib/modules/$kernel_version/kernel" -name "$name.ko*" | head -1)"
    if [ -z "$file" ]; then
        # Built into this kernel: nothing to load.
        continue
    fi
    case "$file" in
        *.xz) xz -dc "$file" > "$root/lib/modules/$name.ko" ;;
        *.zst) zstd -qdc "$file" > "$root/lib/modules/$name.ko" ;;
        *) cp "$file" "$root/lib/modules/$name.ko" ;;
    esac
    echo "$name" >> "$root/lib/modules/order"
done
cp "$here/guest-init.sh" "$root/init"
chmod +x "$root/init"
(cd "$root" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1 > "$cache/initrd.gz")
echo "== VM kernel $kernel_version, initramfs $(du -h "$cache/initrd.gz" | cut -f1)"
