// Changelog lines for `changeset version`: each changeset's summary as written (no commit
// hash: these entries describe what a package offers), and one line for updated lockkit
// dependencies instead of one "Updated dependencies" line per changeset.
/** @type {import('@changesets/types').ChangelogFunctions} */
module.exports = {
  async getReleaseLine(changeset) {
    const [first, ...rest] = changeset.summary.trim().split('\n');
    return [`- ${first}`, ...rest.map((line) => (line.trim() ? `  ${line}` : ''))].join('\n');
  },
  async getDependencyReleaseLine(_changesets, dependencies) {
    if (dependencies.length === 0) return '';
    const names = dependencies.map(
      (dependency) => `\`${dependency.name}@${dependency.newVersion}\``,
    );
    return `- Updated dependencies: ${names.join(', ')}.`;
  },
};
