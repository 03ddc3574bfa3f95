import { scenarioTests } from "@servingcast/servingcast";

scenarioTests(import.meta.url);
