// Where the shared vectors are: tests/vectors/ at the repository root (this file runs from sdk/typescript/dist/test).
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
export const VECTORS = fileURLToPath(new URL("../../../../tests/vectors/", import.meta.url));
