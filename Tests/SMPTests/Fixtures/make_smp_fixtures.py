#!/usr/bin/env python3
"""Writes smp-frames.txt: SMP frames encoded by the Python `smp` package's own
message classes (requests, responses and both error forms, v1 and v2 headers).

Each line is `name | hex of the whole frame (header + CBOR payload)`. The Swift
tests build the same messages with the Swift types and compare bytes, and decode
these bytes with the Swift types. `smp` encodes payloads with
cbor2.dumps(canonical=True), whose key order equals RFC 8949 order for the short
text keys SMP uses.

Usage: python3 make_smp_fixtures.py [output-path]   (default: beside this script;
"-" writes to standard output).
"""
import sys
from importlib.metadata import version
from pathlib import Path

import cbor2
from smp import error
from smp import header as smphdr
from smp import image_management as img
from smp import os_management as osm

V1 = smphdr.Version.V1
V2 = smphdr.Version.V2
HASH_A = bytes(range(0x00, 0x20))
HASH_B = bytes(range(0xA0, 0xC0))
FILE_SHA = bytes(range(0x40, 0x60))


def error_frame(cls, version, op, group, command, sequence, **fields):
    """Error responses need an explicit header: smp's error models carry no operation."""
    body = cbor2.dumps(fields, canonical=True)
    header = smphdr.Header(op=op, version=version, flags=smphdr.Flag(0), length=len(body),
                           group_id=group, sequence=sequence, command_id=command)
    if "err" in fields:
        fields = {"err": error.Err[cls.__pydantic_generic_metadata__["args"][0]
                                   if cls.__pydantic_generic_metadata__["args"] else int](**fields["err"])}
    return cls(header=header, **fields)


def frames():
    W = smphdr.OP.WRITE_RSP
    yield "os-echo-request-v2", osm.EchoWriteRequest(d="hi", sequence=4)
    yield "os-echo-request-v1", osm.EchoWriteRequest(d="hello, board \u2713", sequence=5, version=V1)
    yield "os-echo-response", osm.EchoWriteResponse(r="hi", sequence=4)
    yield "os-reset-request", osm.ResetWriteRequest(sequence=5)
    yield "os-reset-force-request", osm.ResetWriteRequest(force=1, sequence=6)
    yield "os-reset-response", osm.ResetWriteResponse(sequence=6)
    yield "os-params-request", osm.MCUMgrParametersReadRequest(sequence=6)
    yield "os-params-request-v1", osm.MCUMgrParametersReadRequest(sequence=255, version=V1)
    yield "os-params-response", osm.MCUMgrParametersReadResponse(buf_size=2475, buf_count=4, sequence=6)
    yield "os-bootloader-info-request", osm.BootloaderInformationReadRequest(sequence=7)
    yield "os-bootloader-mode-request", osm.BootloaderInformationReadRequest(query="mode", sequence=8)
    yield "os-bootloader-info-response", osm.BootloaderInformationReadResponse(bootloader="MCUboot", sequence=7)
    yield "image-state-read-request", img.ImageStatesReadRequest(sequence=1)
    yield "image-state-read-request-v1", img.ImageStatesReadRequest(sequence=1, version=V1)
    yield "image-state-read-response", img.ImageStatesReadResponse(sequence=1, splitStatus=0, images=[
        img.ImageState(slot=0, version="1.2.3", hash=HASH_A, bootable=True, pending=False, confirmed=True,
                       active=True, permanent=False),
        img.ImageState(slot=1, version="1.3.0.7", hash=HASH_B, bootable=True, pending=True, confirmed=False,
                       active=False, permanent=False),
    ])
    yield "image-state-read-response-multi-image", img.ImageStatesReadResponse(sequence=2, images=[
        img.ImageState(image=0, slot=0, version="2.0.0", hash=HASH_A, bootable=True, pending=False,
                       confirmed=True, active=True, permanent=False),
        img.ImageState(image=1, slot=0, version="0.9.1", hash=HASH_B, bootable=True, pending=False,
                       confirmed=True, active=True, permanent=False),
    ])
    yield "image-state-test-request", img.ImageStatesWriteRequest(hash=HASH_B, confirm=False, sequence=2)
    yield "image-state-confirm-request", img.ImageStatesWriteRequest(confirm=True, sequence=3)
    yield "image-state-confirm-hash-request", img.ImageStatesWriteRequest(hash=HASH_B, confirm=True, sequence=3)
    yield "image-state-write-response", img.ImageStatesWriteResponse(sequence=2, images=[
        img.ImageState(slot=0, version="1.2.3", hash=HASH_A, bootable=True, pending=False, confirmed=True,
                       active=True, permanent=False),
        img.ImageState(slot=1, version="1.3.0.7", hash=HASH_B, bootable=True, pending=True, confirmed=False,
                       active=False, permanent=True),
    ])
    yield "image-upload-first-request", img.ImageUploadWriteRequest(
        off=0, data=bytes((i * 7) & 0xFF for i in range(64)), image=0, len=70000, sha=FILE_SHA,
        upgrade=False, sequence=10)
    yield "image-upload-first-request-v1", img.ImageUploadWriteRequest(
        off=0, data=bytes(range(32)), len=300, sha=FILE_SHA, sequence=11, version=V1)
    yield "image-upload-next-request", img.ImageUploadWriteRequest(
        off=4096, data=bytes((i * 13) & 0xFF for i in range(200)), sequence=12)
    yield "image-upload-response", img.ImageUploadWriteResponse(off=4096, sequence=12)
    yield "image-upload-final-response", img.ImageUploadWriteResponse(off=70000, match=True, sequence=13)
    yield "image-erase-request", img.ImageEraseRequest(slot=1, sequence=14)
    yield "image-erase-default-request", img.ImageEraseRequest(sequence=15)
    yield "image-erase-response", img.ImageEraseResponse(sequence=14)
    yield "error-v1-busy", error_frame(img.ImageManagementErrorV1, V1, W, 1, 1, 12, rc=10)
    yield "error-v1-notsup-with-reason", error_frame(osm.OSManagementErrorV1, V1, W, 0, 5, 20,
                                                     rc=8, rsn="reset hook refused")
    yield "error-v1-too-new", error_frame(img.ImageManagementErrorV1, V1, W, 1, 0, 21, rc=13)
    yield "error-v2-smp-layer", error_frame(img.ImageManagementErrorV1, V2, W, 1, 1, 22, rc=3)
    yield "error-v2-no-free-slot", error_frame(img.ImageManagementErrorV2, V2, W, 1, 1, 10,
                                               err={"group": 1, "rc": 9})
    yield "error-v2-test-active-denied", error_frame(img.ImageManagementErrorV2, V2, W, 1, 0, 2,
                                                     err={"group": 1, "rc": 33})
    yield "error-v2-os-query-no-answer", error_frame(osm.OSManagementErrorV2, V2, smphdr.OP.READ_RSP, 0, 8, 8,
                                                     err={"group": 0, "rc": 3})


def main():
    lines = [
        "# Generated by make_smp_fixtures.py; do not edit.",
        f"# smp {version('smp')}, cbor2 {version('cbor2')}",
        "# name | frame hex (8-byte header + CBOR payload)",
    ]
    for name, message in frames():
        lines.append(f"{name} | {bytes(message).hex()}")
    out = "\n".join(lines) + "\n"
    target = sys.argv[1] if len(sys.argv) > 1 else str(Path(__file__).with_name("smp-frames.txt"))
    if target == "-":
        sys.stdout.write(out)
    else:
        Path(target).write_text(out)


if __name__ == "__main__":
    main()
