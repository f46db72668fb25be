#!/bin/sh
# /init of the real-stack test VM. Loads the modules, mounts the host's root file system
# read-only over virtio-9p (tag "hostroot") and the writable results folder (tag "out"),
# then runs the test script named on the kernel command line inside the host's root, and
# powers off. Everything the test prints goes to the serial console.
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
if mount -t 9p -o trans=virtio,version=9p2000.L,ro hostroot /host && [ -n "$script" ]; then
    # The host's root is read-only: give the guest its own /proc, /sys, /dev, /run, /tmp
    # and bluetoothd's state folder.
    mount -t proc proc /host/proc
    mount -t sysfs sys /host/sys
    mount -t devtmpfs dev /host/dev
    mount -t tmpfs run /host/run
    mount -t tmpfs tmp /host/tmp
    mount -t tmpfs bluetooth /host/var/lib/bluetooth 2>/dev/null
    mkdir -p /host/run/dbus /host/tmp/out
    mount -t 9p -o trans=virtio,version=9p2000.L out /host/tmp/out
    chroot /host /bin/sh "$script"
    echo "guest: test script exited with status $?"
    umount /host/tmp/out
else
    echo "guest: cannot mount the host's root file system or no test script given"
fi
poweroff -f
