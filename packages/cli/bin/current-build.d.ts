/** The package in `dir` and the @tensormine packages it loads, recursively: name -> directory. */
export function workspacePackages(dir: string, found?: Map<string, string>): Map<string, string>;
/** Whether `entry` (a file of the build) of the package in `dir` runs the code of its sources. */
export function builtAndCurrent(dir: string, entry: string): boolean;
