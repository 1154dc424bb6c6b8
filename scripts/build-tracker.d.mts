/** Types of build-tracker.mjs for the tracker's test. */
export declare const TRACKER_OUTPUT_DIR: string;
export declare function buildTracker(): Promise<Record<'script.js' | 'cwv.js', string>>;
