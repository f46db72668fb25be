#!/bin/sh
# /init of the real-stack test VM. Loads the modules, then builds the test's root file system:
# the host's root, read-only over virtio-9p (tag "hostroot"), with the guest's own /proc, /sys,
# /dev, /run and /tmp; in that /tmp, the repository (tag "repo", read-only) at /tmp/repo and
# the writable results folder (tag "out") at /tmp/out. Both are shares of their own, so the
# guest finds them wherever they are on the host, under /tmp or in a path with spaces.
# Runs the test script named on the kernel command line (bitflash.test=PATH, relative to the
# repository) in that root, and powers off. Everything the test prints goes to the serial
# console.
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
while read -r module; do
    insmod "/lib/modules/$module.ko" 2>/dev/null || echo "init: could not load $module"
done < /lib/modules/order
script=""
for word in $(cat /proc/cmdline); do
    case "$word" in bitflash.test=*) script="${word#bitflash.test=}" ;; esac
done
share() { mount -t 9p -o "trans=virtio,version=9p2000.L$3" "$1" "$2"; }
if [ -n "$script" ] && share hostroot /host ,ro; then
    # The host's root is read-only: the guest has its own /proc, /sys, /dev, /run, /tmp and
    # bluetoothd's state folder.
    mount -t proc proc /host/proc
    mount -t sysfs sys /host/sys
    mount -t devtmpfs dev /host/dev
    mount -t tmpfs run /host/run
    mount -t tmpfs tmp /host/tmp
    mount -t tmpfs bluetooth /host/var/lib/bluetooth 2>/dev/null
    mkdir -p /host/run/dbus /host/tmp/repo /host/tmp/out
    if share repo /host/tmp/repo ,ro && share out /host/tmp/out ""; then
        chroot /host /bin/sh "/tmp/repo/$script"
        echo "guest: test script exited with status $?"
        umount /host/tmp/out
    else
        echo "guest: cannot mount the repository or the results folder"
    fi
else
    echo "guest: cannot mount the host's root file system or no test script given"
fi
poweroff -f
