import type { ProviderCase } from '../provider-case.ts'

export const anthropicFaultCases: ProviderCase[] = []
