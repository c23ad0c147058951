export function buildDashboard(options?: {
  outDir?: string;
  minify?: boolean;
}): Promise<{ script: string; style: string | null; scriptBytes: number; ms: number }>;
