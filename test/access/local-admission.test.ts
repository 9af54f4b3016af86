import { LocalAdmission } from '../../src/access/admission.ts';
import { admissionContract } from '../contract/admission-contract.ts';

admissionContract('memory (LocalAdmission)', async ({ store }) => new LocalAdmission(store));
