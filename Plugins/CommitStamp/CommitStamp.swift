import Foundation
import PackagePlugin

/// Stamps the bitflash executable with the git commit it is built from (`bitflash --version`).
///
/// A prebuild command runs before every build, so a plain `swift build` stamps the commit as
/// well as `scripts/package` does: `scripts/lib/commit-stamp.sh` writes `CommitStamp.swift` into
/// the plugin's work directory (never into the source tree), with a nil commit outside a git
/// checkout, and rewrites it only when its text changes.
@main
struct CommitStamp: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "Generated")
        let work = context.pluginWorkDirectoryURL.appending(path: "Work")
        let script = context.package.directoryURL.appending(path: "scripts/lib/commit-stamp.sh")
        return [
            .prebuildCommand(
                displayName: "Stamping \(target.name) with the git commit",
                executable: URL(filePath: "/bin/sh"),
                arguments: [
                    script.path(percentEncoded: false), context.package.directoryURL.path(percentEncoded: false),
                    output.path(percentEncoded: false), work.path(percentEncoded: false)
                ],
                outputFilesDirectory: output)
        ]
    }
}
