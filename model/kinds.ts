/**
 * The members of a union of tags, as a list the program can read at run time: what a
 * history's parser accepts (model/parse-history.ts) is read from these lists, never typed a
 * second time. `kindsOf<Call['kind']>()([...])` compiles only when the list holds every
 * member of the union and nothing else, so a new kind added to a type and forgotten here
 * is a type error that names it (`missing: 'new-kind'`), not a history rejected at run time.
 */
export function kindsOf<Union extends string>() {
  return <const List extends readonly Union[]>(list: List & ([Exclude<Union, List[number]>] extends [never] ? unknown : { readonly missing: Exclude<Union, List[number]> })): List => list;
}
