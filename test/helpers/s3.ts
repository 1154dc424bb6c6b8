import { randomUUID } from 'node:crypto';
import { CreateBucketCommand, DeleteBucketCommand, DeleteObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { inject } from 'vitest';
import type { Config } from '../../src/config.js';

/** The test S3 server (test/setup/radosgw.ts), or null when this machine has none. */
export const s3Endpoint = (): string | null => inject('s3Endpoint') ?? null;

const client = (endpoint: string) =>
  new S3Client({
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'TESTAK', secretAccessKey: 'TESTSECRET' },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });

/** A new empty bucket on the test server, and how to remove it with what it holds. */
export async function testBucket(): Promise<{ config: NonNullable<Config['s3']>; remove(): Promise<void> }> {
  const endpoint = s3Endpoint();
  if (!endpoint) throw new Error('no S3 test server');
  const bucket = `cairn-test-${randomUUID().slice(0, 18)}`;
  const s3 = client(endpoint);
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  return {
    config: { endpoint, bucket, region: 'us-east-1', accessKeyId: 'TESTAK', secretAccessKey: 'TESTSECRET', forcePathStyle: true, timeoutMs: 10_000 },
    async remove() {
      for (;;) {
        const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
        for (const o of page.Contents ?? []) await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: o.Key! }));
        if (!page.IsTruncated) break;
      }
      await s3.send(new DeleteBucketCommand({ Bucket: bucket }));
      s3.destroy();
    },
  };
}

/** Multipart uploads begun and neither completed nor aborted in a bucket (what a cut upload could leave). */
export async function incompleteUploads(config: NonNullable<Config['s3']>): Promise<number> {
  const s3 = client(config.endpoint!);
  try {
    return (await s3.send(new ListMultipartUploadsCommand({ Bucket: config.bucket }))).Uploads?.length ?? 0;
  } finally {
    s3.destroy();
  }
}
