/**
 * The report renderer's packages (vega, vega-lite: about 30 MB installed) are optional peer
 * dependencies, so that `@loop/eval` installs small for users who never draw a chart. They are
 * loaded on first use; when one is missing the error is one line naming what to install.
 */
export async function importOptional<T>(name: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND")
      throw new Error(
        `rendering charts needs the optional package "${name}": install it with npm install vega vega-lite`,
      );
    throw e;
  }
}
